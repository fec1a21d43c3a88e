import pg from 'pg';

/** The same server URL, naming another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Creates `name` (optionally as a copy of `template`) unless it exists. */
export function ensureDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  return withClient(adminUrl, async (client) => {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount) return;
    const from = template ? ` template ${pg.escapeIdentifier(template)}` : '';
    await client.query(`create database ${pg.escapeIdentifier(name)}${from}`);
  });
}

export function dropDatabase(adminUrl: string, name: string): Promise<void> {
  return withClient(adminUrl, async (client) => {
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  });
}
