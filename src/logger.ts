import { AsyncLocalStorage } from 'node:async_hooks';
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/** What is known of the request being served; set once per request by the observability plugin. */
export type RequestScope = {
  requestId: string;
  startedAt: bigint;
  /** The GraphQL operation's label in logs and metrics, once its document is parsed (see graphqlRoute). */
  graphqlRoute?: string;
};

export const requestScope = new AsyncLocalStorage<RequestScope>();

/** pino-pretty is a development dependency: a production install (`npm ci --omit=dev`) has none. */
function prettyInstalled(): boolean {
  try {
    import.meta.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/**
 * JSON lines in production; readable lines on a terminal in development. Every line written while a
 * request is served carries its `requestId`, so an error logged deep inside can be traced to it.
 */
export function createLogger(
  level: string,
  pretty = process.stdout.isTTY && process.env.NODE_ENV !== 'production' && prettyInstalled(),
  destination?: DestinationStream,
): Logger {
  const options = {
    level,
    redact: ['req.headers.authorization', '*.authorization', '*.token', '*.secret'],
    mixin: () => {
      const scope = requestScope.getStore();
      return scope ? { requestId: scope.requestId } : {};
    },
  };
  if (destination) return pino(options, destination);
  return pino({
    ...options,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss' } } } : {}),
  });
}
