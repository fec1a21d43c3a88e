import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { hostOf, isPrivateAddress, RefusedTargetError, type TargetPolicy } from './webhook.targets.ts';

/** The most of an answer's body that is read; the rest is not waited for. */
export const MAX_RESPONSE_READ_BYTES = 64 * 1024;
/** The characters of an answer's body kept with an attempt. */
export const RESPONSE_EXCERPT_CHARS = 1024;

/** One signed message to one URL. */
export type OutgoingWebhook = { url: string; secret: string; messageId: string; body: string };

/** What came of one attempt: a status code when the endpoint answered, otherwise an error. */
export type AttemptOutcome = {
  ok: boolean;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
};

/** The Standard Webhooks headers of `message`, signed now. */
export function signedHeaders(message: OutgoingWebhook, now = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'billing-webhooks/1',
    'webhook-id': message.messageId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(message.secret).sign(message.messageId, now, message.body),
  };
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The DNS lookup of a delivery's connection: it resolves the host afresh and refuses every non-public
 * address unless allowed, so the address checked is the address connected to (no rebinding between
 * a check and the request).
 */
function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = policy.allowPrivateTargets
        ? undefined
        : addresses.find(({ address }) => isPrivateAddress(address));
      if (refused) {
        return callback(
          new RefusedTargetError(`${hostname} resolves to ${refused.address}, not a public address`),
          [],
        );
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * POSTs `message`, signed, to its URL: one attempt, `timeoutMs` for all of it (connecting, sending,
 * the answer's headers and up to MAX_RESPONSE_READ_BYTES of its body). Redirects are not followed.
 * Any 2xx answer succeeds. Never throws: a failure is an outcome.
 */
export function sendWebhook(
  message: OutgoingWebhook,
  { timeoutMs, policy }: { timeoutMs: number; policy: TargetPolicy },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string): AttemptOutcome => ({
    ok: false,
    statusCode: null,
    responseBody: null,
    error,
    durationMs: elapsed(),
  });
  let url: URL;
  try {
    url = new URL(message.url);
  } catch {
    return Promise.resolve(failed('the URL cannot be parsed'));
  }
  const host = hostOf(url);
  if (isIP(host) && !policy.allowPrivateTargets && isPrivateAddress(host)) {
    return Promise.resolve(failed(`${host} is not a public address`));
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = client.request(url, {
      method: 'POST',
      headers: { ...signedHeaders(message), 'content-length': String(Buffer.byteLength(message.body)) },
      lookup: guardedLookup(policy) as never,
      // One connection per attempt: a pooled socket would skip the lookup.
      agent: false,
    });
    const timer = setTimeout(() => finish(failed(`no answer within ${timeoutMs} ms`)), timeoutMs);
    request.on('error', (error) => finish(failed(error.message)));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const statusCode = response.statusCode ?? 0;
        const text = Buffer.concat(chunks).subarray(0, MAX_RESPONSE_READ_BYTES).toString('utf8');
        const ok = statusCode >= 200 && statusCode < 300;
        finish({
          ok,
          statusCode,
          responseBody: text.slice(0, RESPONSE_EXCERPT_CHARS),
          error: ok ? null : `the endpoint answered ${statusCode}`,
          durationMs: elapsed(),
        });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_RESPONSE_READ_BYTES) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(message.body);
  });
}
