import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import Negotiator from 'negotiator';

export type AssetSource = {
  /** The URL path it is served at. */
  path: string;
  contentType: string;
  /** Read when first asked for, so a page nobody opens costs no memory. */
  load: () => Promise<string | Uint8Array>;
};

type Encoding = 'br' | 'gzip' | 'identity';
type Loaded = { version: string; representations: Map<Encoding, Promise<Uint8Array>> };

// negotiator 1.x breaks ties between equally accepted encodings by the server's order when given one
// (browsers list gzip before br); @types/negotiator predates that option.
type EncodingNegotiator = {
  encoding(available: readonly string[], options: { preferred: readonly string[] }): string | undefined;
};
const ENCODINGS: readonly Encoding[] = ['br', 'gzip', 'identity'];

/**
 * Compression level 6: GraphiQL's 5 MB script takes about half a second (level 11 takes over a minute) and
 * comes out 12% smaller than gzip.
 */
const COMPRESS: Record<Exclude<Encoding, 'identity'>, (plain: Uint8Array) => Promise<Uint8Array>> = {
  br: (plain) =>
    promisify(brotliCompress)(plain, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 6,
        [constants.BROTLI_PARAM_SIZE_HINT]: plain.byteLength,
      },
    }),
  gzip: (plain) => promisify(gzip)(plain),
};

/** Headers every response of a page's asset carries, so nothing is sniffed into an unintended type. */
export const NOSNIFF = { 'x-content-type-options': 'nosniff' } as const;

/**
 * Static files of the browser pages, served from memory: compressed as the client accepts (brotli, then
 * gzip), each encoding made once per process when first asked for. A page links them with `?v=<hash>`, and
 * such a URL is cached for a year, since the next version of the file has another URL; a URL without it
 * is revalidated by its ETag.
 */
export class StaticAssets {
  readonly #sources: Map<string, AssetSource>;
  readonly #loaded = new Map<string, Promise<Loaded>>();

  constructor(sources: readonly AssetSource[]) {
    this.#sources = new Map(sources.map((source) => [source.path, source]));
  }

  get paths(): string[] {
    return [...this.#sources.keys()];
  }

  /** The versioned URL a page links the asset at. */
  async url(path: string): Promise<string> {
    return `${path}?v=${(await this.#load(path)).version}`;
  }

  /** The asset's response, or undefined when `url` is not one of the assets. */
  async respond(request: Request, url: URL): Promise<Response | undefined> {
    if (!this.#sources.has(url.pathname)) return undefined;
    const { version, representations } = await this.#load(url.pathname);
    const accepted = (
      new Negotiator({
        headers: { 'accept-encoding': request.headers.get('accept-encoding') ?? undefined },
      }) as unknown as EncodingNegotiator
    ).encoding(ENCODINGS, { preferred: ENCODINGS });
    const encoding = (accepted as Encoding | undefined) ?? 'identity';
    const headers: Record<string, string> = {
      'content-type': this.#sources.get(url.pathname)!.contentType,
      'cache-control':
        url.searchParams.get('v') === version ? 'public, max-age=31536000, immutable' : 'no-cache',
      etag: `"${version}-${encoding}"`,
      vary: 'accept-encoding',
      ...NOSNIFF,
      ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }),
    };
    if (request.headers.get('if-none-match')?.includes(headers.etag!)) {
      return new Response(null, { status: 304, headers });
    }
    let body = representations.get(encoding);
    if (!body) {
      const plain = await representations.get('identity')!;
      body = COMPRESS[encoding as Exclude<Encoding, 'identity'>](plain);
      representations.set(encoding, body);
    }
    return new Response(new Uint8Array(await body), { headers });
  }

  #load(path: string): Promise<Loaded> {
    let loaded = this.#loaded.get(path);
    if (!loaded) {
      const source = this.#sources.get(path);
      if (!source) throw new Error(`${path} is not a static asset`);
      loaded = source.load().then((content) => {
        const plain = typeof content === 'string' ? Buffer.from(content) : content;
        return {
          version: createHash('sha256').update(plain).digest('base64url').slice(0, 16),
          representations: new Map([['identity', Promise.resolve(plain)]]),
        };
      });
      this.#loaded.set(path, loaded);
    }
    return loaded;
  }
}
