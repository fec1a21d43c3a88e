import type { RequestContext } from '../context.ts';
import { inRequestTransaction } from '../context.ts';

/** Chunks a streamed answer may hold ahead of a slow reader before its producer waits. */
const CHUNKS_AHEAD = 4;

/**
 * A response body produced after the handler returned: `produce` runs in a transaction of the request's
 * environment of its own, which stays open while the client reads and ends with the stream. It waits
 * when the client reads slower than it produces, and stops (rolling back) when the client goes away.
 * A failure halfway errors the stream, so the client sees a broken transfer rather than a short file.
 */
export function streamInTransaction(
  ctx: RequestContext,
  produce: (ctx: RequestContext) => AsyncIterable<Uint8Array>,
): ReadableStream<Uint8Array> {
  let cancelled = false;
  let wake: (() => void) | undefined;
  const resume = () => {
    wake?.();
    wake = undefined;
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        inRequestTransaction(ctx, async (tx) => {
          for await (const chunk of produce(tx)) {
            if (cancelled) return;
            controller.enqueue(chunk);
            if ((controller.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => (wake = resolve));
          }
        }).then(
          () => {
            if (!cancelled) controller.close();
          },
          (error: unknown) => {
            if (!cancelled) controller.error(error);
          },
        );
      },
      pull: resume,
      cancel() {
        cancelled = true;
        resume();
      },
    },
    { highWaterMark: CHUNKS_AHEAD },
  );
}
