import { DefaultLogger, type LogContext } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';

const TRANSACTION_OVERHEAD = /^(begin|commit|rollback|set local role|select set_config)\b/i;

/** Records the SQL statements an ORM sends, authentication's (the token lookup) aside. */
export class StatementLog extends DefaultLogger {
  statements: string[] = [];

  override logQuery(context: LogContext): void {
    const query = context.query ?? '';
    if (!query.includes('api_token')) this.statements.push(query);
  }

  /** The statements doing the request's work: those opening and closing its transaction aside. */
  work(): string[] {
    return this.statements.filter((query) => !TRANSACTION_OVERHEAD.test(query));
  }
}

/** An ORM over `databaseUrl` whose statements `log` records. */
export async function openLoggedOrm(databaseUrl: string): Promise<{ orm: MikroORM; log: StatementLog }> {
  let log: StatementLog | undefined;
  const orm = await MikroORM.init({
    ...ormOptions(databaseUrl, { entities, poolMax: 2 }),
    debug: ['query'],
    loggerFactory: (options) => {
      log = new StatementLog(options);
      return log;
    },
  });
  return { orm, log: log as StatementLog };
}
