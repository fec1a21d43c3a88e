export const MAX_BODY_BYTES = 1024 * 1024;

export class BodyError extends Error {
  readonly status: 400 | 413 | 415;

  constructor(status: 400 | 413 | 415, message: string) {
    super(message);
    this.status = status;
  }
}

/** Reads a JSON request body: 415 unless `application/json`, 413 past 1 MiB, 400 when malformed. */
export async function readJsonBody(request: Request): Promise<unknown> {
  const mediaType = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new BodyError(415, 'The request body must be sent as Content-Type: application/json.');
  }
  const text = (await readBodyBytes(request)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BodyError(400, `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Reads a request body whole, refusing (413) one over 1 MiB, whether declared so or streamed. */
export async function readBodyBytes(request: Request): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();

  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  for (let read = await reader?.read(); reader && read && !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks);
}

const tooLarge = () => new BodyError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes.`);
