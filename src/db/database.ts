import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { startEmbeddedDatabase } from './embedded.ts';

export type Database = {
  url: string;
  /** Where connections that need a session of their own go: DATABASE_SESSION_URL, else `url`. */
  sessionUrl: string;
  embedded: boolean;
  created: boolean;
  stop: () => Promise<void>;
};

/** `DATABASE_URL` when set; otherwise the PostgreSQL embedded under `DATA_DIR`. */
export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  if (config.DATABASE_URL) {
    return {
      url: config.DATABASE_URL,
      sessionUrl: config.DATABASE_SESSION_URL ?? config.DATABASE_URL,
      embedded: false,
      created: false,
      stop: async () => {},
    };
  }
  logger.info({ dataDir: config.DATA_DIR }, 'starting embedded PostgreSQL');
  const embedded = await startEmbeddedDatabase(config.DATA_DIR, {
    onLog: (message) => logger.trace({ postgres: message.trim() }),
  });
  return { ...embedded, sessionUrl: embedded.url, embedded: true };
}
