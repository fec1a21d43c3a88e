import { ServerResponse } from 'node:http';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { FREE_QUERY_COST } from './cost-budget.ts';
import { requestDeadline } from './deadline.ts';

/** Seconds a client refused SERVER_BUSY is told to wait: the heavy work ahead of it takes a few. */
export const SERVER_BUSY_RETRY_AFTER_SECONDS = 2;

type Waiter = { cost: number; admit: () => void };

/**
 * Starts a major garbage collection in the background when the process runs with `--expose-gc` (`npm
 * start` does); does nothing otherwise.
 */
export function collectGarbageSoon(): void {
  const gc = (globalThis as { gc?: (options: { type: 'major'; execution: 'async' }) => void }).gc;
  gc?.({ type: 'major', execution: 'async' });
}

/**
 * A process-wide bound on the query cost of the GraphQL operations executing at once: the memory of
 * an execution grows with what it reads and answers, which its cost bounds. An operation costing at
 * most FREE_QUERY_COST passes at once (a counter compare). A costlier one runs when the cost in
 * flight plus its own fits `capacity` (or nothing else is in flight: one larger than the capacity
 * runs alone), in arrival order; it waits at most until its request's deadline.
 */
export class CostGate {
  private inFlight = 0;
  private readonly queue: Waiter[] = [];

  readonly capacity: number;
  private readonly afterLarge: () => void;

  /**
   * `afterLarge` runs when an operation that needed more than half the capacity (one that runs alone)
   * gives its admission back: by default it starts a major collection. Such an operation leaves tens
   * of MiB of garbage (its rows, their parsed JSON, its result tree), and a collection V8 ran during it
   * set the heap's next limit at 1.5 times the live heap then, operation included: collected when it
   * ends, the next one starts from the heap at rest (bench/PROFILE.md, Round 6).
   */
  constructor(capacity: number, afterLarge: () => void = collectGarbageSoon) {
    this.capacity = capacity;
    this.afterLarge = afterLarge;
  }

  /** The cost of the operations executing now (for tests and metrics). */
  get costInFlight(): number {
    return this.inFlight;
  }

  /** How many operations wait for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Waits for `cost` to fit, until `endsAt` (epoch ms) or `signal` aborts. Resolves to the release
   * function (idempotent), or null when the operation could not get in.
   */
  async enter(cost: number, endsAt: number, signal?: AbortSignal): Promise<(() => void) | null> {
    if (cost <= FREE_QUERY_COST) return () => {};
    if (this.queue.length === 0 && this.fits(cost)) return this.take(cost);
    if (signal?.aborted || endsAt <= Date.now()) return null;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', leave);
        const index = this.queue.indexOf(waiter);
        if (index < 0) return;
        this.queue.splice(index, 1);
        resolve(null);
        // The operations behind it may fit now.
        this.admitWaiting();
      };
      const waiter: Waiter = {
        cost,
        admit: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', leave);
          resolve(this.take(cost));
        },
      };
      this.queue.push(waiter);
      timer = setTimeout(leave, endsAt - Date.now());
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  private fits(cost: number): boolean {
    return this.inFlight === 0 || this.inFlight + cost <= this.capacity;
  }

  private take(cost: number): () => void {
    this.inFlight += cost;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= cost;
      if (cost * 2 > this.capacity) this.afterLarge();
      this.admitWaiting();
    };
  }

  /** Admits the waiting operations at the head of the queue that fit, in order. */
  private admitWaiting(): void {
    for (let head = this.queue[0]; head && this.fits(head.cost); head = this.queue[0]) {
      this.queue.shift();
      head.admit();
    }
  }
}

type Execute = (args: ExecutionArgs) => Promise<ExecutionResult>;

/** The cost each request's operation was priced at (useQueryCost), for the gate. */
const operationCosts = new WeakMap<Request, number>();

export function recordOperationCost(request: Request | undefined, cost: number): void {
  if (request) operationCosts.set(request, cost);
}

/**
 * What the gate keeps of an admitted request: executions still running after its answer (a timeout),
 * whether the admitting execution has returned, and whether its answer is out (written, or its
 * connection closed).
 */
type Admission = {
  running: number;
  executed: boolean;
  delivered: boolean;
  release: () => void;
  backstop?: NodeJS.Timeout;
};

const requestOf = (args: ExecutionArgs) => (args.contextValue as { request?: Request } | undefined)?.request;

/** The node:http response the answer is written to, when the app runs under a node:http server. */
const responseOf = (args: ExecutionArgs) => {
  const res = (args.contextValue as { res?: unknown } | undefined)?.res;
  return res instanceof ServerResponse ? res : undefined;
};

function busy(cost: number, capacity: number) {
  return {
    errors: [
      createGraphQLError(
        `The server is busy with other large queries and this one (cost ${cost}) could not start before its deadline. Retry in ${SERVER_BUSY_RETRY_AFTER_SECONDS} s, or ask for smaller pages or fewer fields.`,
        {
          extensions: {
            code: 'SERVER_BUSY',
            cost,
            maxCostInFlight: capacity,
            retryAfter: SERVER_BUSY_RETRY_AFTER_SECONDS,
            http: { status: 503, headers: { 'retry-after': String(SERVER_BUSY_RETRY_AFTER_SECONDS) } },
          },
        },
      ),
    ],
  };
}

/**
 * The gate as two Yoga plugins. `admit` must be registered after every plugin that wraps execution
 * (the tenant transaction last), so it wraps them all: an operation waits before any transaction is
 * opened. `track` must be registered just before the tenant transaction, so it wraps the execution
 * itself: an execution the deadline answered TIMEOUT still runs (and holds its memory) until it finds
 * its transaction gone, and keeps its cost in the gate until then.
 *
 * An admission is given back once the execution has ended and its answer is out: under a node:http
 * server when the response has been written or its connection closed (the answer's string and its
 * encoding are in memory until then: the next heavy operation must not start beside them); through
 * `app.fetch` when the answer has been serialised (the Response handed over). In any case at the latest
 * `timeoutMs` after the execution returned, so a client reading slowly cannot hold the gate.
 */
export function costGatePlugins(gate: CostGate, timeoutMs: number): { admit: Plugin; track: Plugin } {
  const admissions = new WeakMap<Request, Admission>();
  const settle = (admission: Admission) => {
    if (admission.executed && admission.delivered && admission.running === 0) {
      clearTimeout(admission.backstop);
      admission.release();
    }
  };
  const deliver = (admission: Admission) => {
    if (admission.delivered) return;
    admission.delivered = true;
    settle(admission);
  };
  return {
    track: {
      onExecute({ executeFn, setExecuteFn }) {
        const execute = executeFn as Execute;
        setExecuteFn(async (args: ExecutionArgs) => {
          const request = requestOf(args);
          const admission = request && admissions.get(request);
          if (!admission) return execute(args);
          admission.running++;
          try {
            return await execute(args);
          } finally {
            admission.running--;
            settle(admission);
          }
        });
      },
    },
    admit: {
      onExecute({ executeFn, setExecuteFn }) {
        const execute = executeFn as Execute;
        setExecuteFn(async (args: ExecutionArgs) => {
          const request = requestOf(args);
          const cost = (request && operationCosts.get(request)) ?? 0;
          if (!request || cost <= FREE_QUERY_COST) return execute(args);
          const release = await gate.enter(cost, requestDeadline(request, timeoutMs).endsAt, request.signal);
          if (!release) return busy(cost, gate.capacity);
          const admission: Admission = { running: 0, executed: false, delivered: false, release };
          admissions.set(request, admission);
          const response = responseOf(args);
          if (response) {
            // 'close' follows the end of the write, or the connection's end, whichever comes first.
            if (response.destroyed) admission.delivered = true;
            else response.once('close', () => deliver(admission));
          }
          try {
            return await execute(args);
          } finally {
            admission.executed = true;
            if (!admission.delivered) {
              admission.backstop = setTimeout(() => deliver(admission), timeoutMs);
              admission.backstop.unref();
            }
            settle(admission);
          }
        });
      },
      // Through `app.fetch` (no node:http response): the answer is out once it is a Response.
      onResponse({ request, serverContext }) {
        const admission = admissions.get(request);
        if (admission && !responseOf({ contextValue: serverContext } as ExecutionArgs)) deliver(admission);
      },
    },
  };
}
