import { createGraphQLError, Repeater } from 'graphql-yoga';
import pg from 'pg';
import type { PublishedEvent } from '../../jobs/runner.ts';

/** The channel Migration20261124150000LiveEvents notifies with every committed event. */
export const EVENT_CHANNEL = 'billing_event';

/** Live streams one API token may hold open in one server process. */
export const MAX_STREAMS_PER_TOKEN = 20;

/** Events a stream may hold for a subscriber that reads slower than they come; past that it ends. */
const MAX_BEHIND = 1000;

type Subscriber = {
  environmentId: string;
  tokenId: string;
  deliver: (event: PublishedEvent) => void;
  fail: (error: Error) => void;
};

/**
 * One process's view of the events committed by any process: one connection LISTENs on the channel
 * while someone subscribes, and hands each notification to the subscribers of its environment. The
 * connection opens with the first subscriber and closes with the last; if it is lost, every stream
 * ends with an error, and clients reconnect (and read what they missed from `events`).
 */
class EventFeed {
  private readonly connectionString: string;
  private readonly subscribers = new Set<Subscriber>();
  private client: Promise<pg.Client> | null = null;

  constructor(connectionString: string) {
    this.connectionString = connectionString;
  }

  /**
   * The committed events of `environmentId`, from now on, until the consumer stops reading. Resolves
   * once the feed is listening, so the stream's response starts only when nothing can be missed.
   */
  async subscribe(environmentId: string, tokenId: string): Promise<AsyncIterable<PublishedEvent>> {
    const open = [...this.subscribers].filter((subscriber) => subscriber.tokenId === tokenId).length;
    if (open >= MAX_STREAMS_PER_TOKEN) {
      throw createGraphQLError(
        `This API token has ${open} live event streams open on this server, the most it may; close one first.`,
        { extensions: { code: 'TOO_MANY_STREAMS', http: { status: 429 } } },
      );
    }
    await this.listen();
    return new Repeater<PublishedEvent>(async (push, stop) => {
      let behind = 0;
      const subscriber: Subscriber = {
        environmentId,
        tokenId,
        deliver: (event) => {
          behind += 1;
          if (behind > MAX_BEHIND) {
            stop(
              new Error(
                `the subscriber fell more than ${MAX_BEHIND} events behind; read the rest from \`events\``,
              ),
            );
            return;
          }
          push(event).then(
            () => {
              behind -= 1;
            },
            () => {},
          );
        },
        fail: (error) => stop(error),
      };
      this.subscribers.add(subscriber);
      try {
        await this.listen();
      } catch (error) {
        stop(error as Error);
      }
      await stop;
      this.subscribers.delete(subscriber);
      if (this.subscribers.size === 0) await this.close();
    });
  }

  private listen(): Promise<pg.Client> {
    this.client ??= (async () => {
      const client = new pg.Client({ connectionString: this.connectionString });
      client.on('notification', ({ payload }) => this.dispatch(payload));
      client.on('error', (error) => this.lost(error));
      client.on('end', () => this.lost(new Error('the event feed lost its database connection')));
      await client.connect();
      await client.query(`listen ${EVENT_CHANNEL}`);
      return client;
    })().catch((error) => {
      this.client = null;
      throw error;
    });
    return this.client;
  }

  private dispatch(payload: string | undefined): void {
    if (!payload) return;
    const event = JSON.parse(payload) as PublishedEvent;
    for (const subscriber of this.subscribers) {
      if (subscriber.environmentId === event.environmentId) subscriber.deliver(event);
    }
  }

  /** Ends every stream (the server is stopping) and closes the connection. */
  async end(reason: Error): Promise<void> {
    for (const subscriber of this.subscribers) subscriber.fail(reason);
    await this.close();
  }

  private lost(error: Error): void {
    if (!this.client) return;
    this.client = null;
    for (const subscriber of this.subscribers) subscriber.fail(error);
  }

  private async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) await (await client.catch(() => null))?.end().catch(() => {});
  }
}

const feeds = new Map<string, EventFeed>();

/** The process's feed of the database at `connectionString`. */
export function eventFeed(connectionString: string): EventFeed {
  let feed = feeds.get(connectionString);
  if (!feed) {
    feed = new EventFeed(connectionString);
    feeds.set(connectionString, feed);
  }
  return feed;
}

/** Ends every live stream of the process: a stopping server does not wait for clients to hang up. */
export async function endEventFeeds(): Promise<void> {
  const reason = new Error('the server is shutting down; reconnect to another');
  await Promise.all([...feeds.values()].map((feed) => feed.end(reason)));
}
