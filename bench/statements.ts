import pg from 'pg';

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/**
 * Records every statement sent through any `pg` client of this process (MikroORM's pool and the
 * baseline's alike), `begin` and `commit` included: what a request costs in round trips.
 */
export class StatementRecorder {
  private readonly original: Query;
  private seen: string[] = [];

  constructor() {
    const prototype = pg.Client.prototype as unknown as { query: Query };
    this.original = prototype.query;
    const seen = () => this.seen;
    const original = this.original;
    prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [config] = args;
      seen().push(typeof config === 'string' ? config : ((config as { text?: string })?.text ?? '(cursor)'));
      return original.apply(this, args);
    };
  }

  /** The statements sent while `work` ran. */
  async during(work: () => Promise<unknown>): Promise<string[]> {
    this.seen = [];
    await work();
    const statements = this.seen;
    this.seen = [];
    return statements;
  }

  restore(): void {
    (pg.Client.prototype as unknown as { query: Query }).query = this.original;
  }
}
