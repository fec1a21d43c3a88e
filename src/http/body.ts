import { isUtf8 } from 'node:buffer';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The status nginx records for a request its client abandoned. Nobody receives an answer with it: it
 * only tells logs and metrics that the request ended because the client went away.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** The code of each refusal of a body, on REST (problem `code`) and GraphQL (`extensions.code`). */
export const BODY_ERROR_CODES = {
  400: { code: 'MALFORMED_BODY', title: 'Malformed JSON' },
  413: { code: 'PAYLOAD_TOO_LARGE', title: 'Payload too large' },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', title: 'Unsupported media type' },
  [CLIENT_CLOSED_REQUEST]: { code: 'CLIENT_CLOSED_REQUEST', title: 'Client closed request' },
} as const;

export class BodyError extends Error {
  readonly status: 400 | 413 | 415 | typeof CLIENT_CLOSED_REQUEST;

  constructor(status: BodyError['status'], message: string, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

/**
 * Reads a JSON request body: 415 unless `application/json`, 413 past 1 MiB, 400 when it is not UTF-8 or
 * not JSON.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const mediaType = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new BodyError(415, 'The request body must be sent as Content-Type: application/json.');
  }
  const text = assertUtf8(await readBodyBytes(request)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BodyError(400, `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Refuses (400) a body that is not UTF-8. Decoding it leniently would store U+FFFD in place of the bad
 * bytes: text the client never sent.
 */
export function assertUtf8(bytes: Buffer): Buffer {
  if (!isUtf8(bytes)) {
    throw new BodyError(400, 'The request body is not valid UTF-8; encode its text as UTF-8.');
  }
  return bytes;
}

/** Reads a request body whole, refusing (413) one over 1 MiB, whether declared so or streamed. */
export async function readBodyBytes(request: Request): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  // A declared length is all the HTTP parser delivers: such a body is read whole, without a stream
  // reader's promise per chunk (most of the cost of reading a small body).
  if (declared > 0) return readDeclared(request);

  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (let read = await nextChunk(reader); !read.done; read = await nextChunk(reader)) {
    size += read.value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks);
}

/** A body of a declared length, whole; measured again, since a Request built in-process can declare anything. */
async function readDeclared(request: Request): Promise<Buffer> {
  let body: ArrayBuffer | Buffer;
  try {
    body = await request.arrayBuffer();
  } catch (error) {
    throw clientClosed(error);
  }
  // whatwg-node's Request answers its Buffer itself, a standard one an ArrayBuffer: neither is copied.
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  if (bytes.byteLength > MAX_BODY_BYTES) throw tooLarge();
  return bytes;
}

/**
 * The body stream fails only when the client's connection does: the client closed or reset it before
 * sending the length it declared (Node fails the stream with ECONNRESET "aborted"). That is the
 * client's doing, whatever the error's code says, and never the database's.
 */
async function nextChunk(reader: ReadableStreamDefaultReader<Uint8Array>) {
  try {
    return await reader.read();
  } catch (error) {
    throw clientClosed(error);
  }
}

const clientClosed = (cause: unknown) =>
  new BodyError(CLIENT_CLOSED_REQUEST, 'The client closed the connection before sending the whole body.', {
    cause,
  });

const tooLarge = () => new BodyError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes.`);
