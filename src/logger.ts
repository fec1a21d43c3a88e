import { type Logger, pino } from 'pino';

export type { Logger };

/** JSON lines in production; readable lines on a terminal in development. */
export function createLogger(
  level: string,
  pretty = process.stdout.isTTY && process.env.NODE_ENV !== 'production',
): Logger {
  return pino({
    level,
    redact: ['req.headers.authorization', '*.authorization', '*.token', '*.secret'],
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss' } } } : {}),
  });
}
