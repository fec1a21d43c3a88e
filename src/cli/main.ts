import { parseArgs } from 'node:util';
import { validate as isUuid } from 'uuid';
import { AccessService } from '../auth/access.service.ts';
import { TOKEN_SCOPES, type TokenScope } from '../auth/api-token.entity.ts';
import { TAX_ROUNDINGS, type TaxRounding } from '../auth/environment.entity.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { DEFAULT_TIME_ZONE, timeZoneName } from '../dates/zone.ts';
import { openDatabase } from '../db/database.ts';
import { migrate, type Orm, openOrm } from '../db/orm.ts';
import { createLogger } from '../logger.ts';
import { entities } from '../modules/registry.ts';

const USAGE = `Usage: npm run -s cli -- <command> [options]

Commands:
  env create --name <name> [--test] [--tax-rounding document|line] [--timezone <IANA>] [--json]
                                                          create an environment (live unless --test); VAT
                                                          rounded per invoice rate group (document, default)
                                                          or per line; new customers' time zone (default UTC)
  env list [--json]                                       list environments
  token create --env <uuid> [--env <uuid> ...] [--name <label>] [--scope read|write] [--json]
                                                          create an API token (the secret is shown once);
                                                          scope write (default) or read (queries and GET only)
  token list [--json]                                     list tokens (never their secrets)
  token revoke <id>                                       revoke a token
  migrate                                                 apply pending database migrations

The database is DATABASE_URL when set, otherwise the embedded one under DATA_DIR (default .data),
joined while the server runs or started for the command.`;

class UsageError extends Error {}

type Output = { json: unknown; text: string };
type Command = (access: AccessService, orm: Orm) => Promise<Output>;

/** Checks the arguments before anything touches the database; a mistake is a UsageError. */
function parseCommand(argv: string[]): Command {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: 'string' },
      env: { type: 'string', multiple: true },
      test: { type: 'boolean', default: false },
      'tax-rounding': { type: 'string', default: 'document' },
      timezone: { type: 'string', default: DEFAULT_TIME_ZONE },
      scope: { type: 'string', default: 'write' },
      json: { type: 'boolean', default: false },
    },
  });
  const [command, action, ...rest] = positionals;

  switch (`${command ?? ''} ${action ?? ''}`.trim()) {
    case 'env create': {
      const name = values.name?.trim();
      if (!name) throw new UsageError('env create needs --name <name>');
      const kind = values.test ? 'test' : 'live';
      const taxRounding = values['tax-rounding'] as TaxRounding;
      if (!TAX_ROUNDINGS.includes(taxRounding)) {
        throw new UsageError(`--tax-rounding must be document or line, not ${taxRounding}`);
      }
      const timezone = timeZoneName(values.timezone);
      if (!timezone) throw new UsageError(`--timezone ${values.timezone} is not an IANA time zone`);
      return async (access) => {
        const environment = await access.createEnvironment(name, kind, taxRounding, timezone);
        return {
          json: {
            id: environment.id,
            name: environment.name,
            kind: environment.kind,
            taxRounding: environment.taxRounding,
            timezone: environment.timezone,
          },
          text: `${environment.id}  ${environment.kind}  ${environment.name}  (VAT per ${environment.taxRounding}; ${environment.timezone})`,
        };
      };
    }
    case 'env list':
      return async (access) => {
        const environments = await access.listEnvironments();
        return {
          json: environments.map(({ id, name, kind, taxRounding, createdAt }) => ({
            id,
            name,
            kind,
            taxRounding,
            createdAt,
          })),
          text:
            environments.map(({ id, name, kind }) => `${id}  ${kind}  ${name}`).join('\n') ||
            '(no environments)',
        };
      };
    case 'token create': {
      const environmentIds = values.env ?? [];
      if (environmentIds.length === 0) throw new UsageError('token create needs at least one --env <uuid>');
      const bad = environmentIds.find((id) => !isUuid(id));
      if (bad) throw new UsageError(`--env ${bad} is not a UUID`);
      const scope = values.scope as TokenScope;
      if (!TOKEN_SCOPES.includes(scope)) throw new UsageError(`--scope must be read or write, not ${scope}`);
      return async (access) => {
        const { token, secret } = await access.createToken(environmentIds, values.name, scope);
        return {
          json: { id: token.id, token: secret, scope: token.scope },
          text: `${token.scope} token ${token.id} created; its secret is shown only now:\n${secret}`,
        };
      };
    }
    case 'token list':
      return async (access) => {
        const tokens = await access.listTokens();
        return {
          json: tokens.map(
            ({ id, name, prefix, scope, environmentIds, createdAt, lastUsedAt, revokedAt }) => ({
              id,
              name,
              prefix,
              scope,
              environmentIds,
              createdAt,
              lastUsedAt,
              revokedAt,
            }),
          ),
          text:
            tokens
              .map(
                ({ id, prefix, scope, revokedAt, name }) =>
                  `${id}  ${prefix}…  ${scope.padEnd(5)}  ${revokedAt ? 'revoked' : 'active '}  ${name ?? ''}`,
              )
              .join('\n') || '(no tokens)',
        };
      };
    case 'token revoke': {
      const [id] = rest;
      if (!id || !isUuid(id)) throw new UsageError('token revoke needs the token id (a UUID)');
      return async (access) => {
        if (!(await access.revokeToken(id))) throw new UsageError(`no token has id ${id}`);
        return { json: { id, revoked: true }, text: `token ${id} revoked` };
      };
    }
    case 'migrate':
      return async (_access, orm) => {
        const applied = await migrate(orm);
        return {
          json: { applied },
          text: applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date',
        };
      };
    default:
      throw new UsageError(command ? `unknown command: ${positionals.join(' ')}` : 'no command given');
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  const command = parseCommand(argv);
  const config = loadConfig();
  const logger = createLogger('warn', false);
  const database = await openDatabase(config, logger);
  // Administration (environments, tokens, migrations) is the owner's business, not the application role's.
  // Its session URL: `migrate` holds a lock across transactions (see migrate).
  const orm = await openOrm(database.sessionUrl, {
    entities,
    poolMax: 2,
    owner: true,
    preparedStatements: config.DB_PREPARED_STATEMENTS,
  });
  try {
    const output = await command(new AccessService(orm.em.fork()), orm);
    console.log(argv.includes('--json') ? JSON.stringify(output.json) : output.text);
    return 0;
  } finally {
    await orm.close();
    await database.stop();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const usage =
    error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  if (usage) {
    console.error(`error: ${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (error instanceof ConfigError) {
    console.error(error.message);
    process.exitCode = 1;
  } else {
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
