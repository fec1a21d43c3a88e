import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';

/** What a browser sends: it lists gzip first, yet the server should pick brotli. */
const BROWSER_ENCODINGS = 'gzip, deflate, br, zstd';

/** The Content-Security-Policy header as directive -> sources. */
export function contentSecurityPolicy(response: Response): Record<string, string[]> {
  const header = response.headers.get('content-security-policy') ?? '';
  return Object.fromEntries(
    header
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name, sources]),
  );
}

/** The headers every HTML page carries: a policy that runs only this origin's script files, and so on. */
export function expectPageHeaders(response: Response): void {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const policy = contentSecurityPolicy(response);
  expect(policy['default-src']).toEqual(["'none'"]);
  expect(policy['script-src']).toEqual(["'self'"]);
  expect(policy['connect-src']).toEqual(["'self'"]);
  expect(policy['frame-ancestors']).toEqual(["'none'"]);
  expect(policy['base-uri']).toEqual(["'none'"]);
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
}

/** Every `<script>` of the page loads a file or is a JSON data block: none is inline code. */
export function expectNoInlineScript(html: string): void {
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  expect(scripts.length).toBeGreaterThan(0);
  for (const [, attributes, content] of scripts) {
    if (/\bsrc="\/[^"]+"/.test(attributes!)) expect(content).toBe('');
    else expect(attributes).toContain('type="application/json"');
  }
}

/** The same-origin URLs the page's scripts, stylesheets and icons load. */
export function linkedAssets(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="(\/[^"]*)"/g)].map(([, url]) => url!);
}

/**
 * An asset a page links: brotli for a browser, gzip for a client that takes only gzip, plain otherwise,
 * each decompressing to the same bytes; cached for good at its versioned URL and revalidated by ETag.
 */
export async function expectCompressedAsset(app: App, url: string, contentType: string): Promise<void> {
  const get = (headers: Record<string, string> = {}, path = url) =>
    app.fetch(`http://test${path}`, { headers });
  const plain = await get();
  expect(plain.status).toBe(200);
  expect(plain.headers.get('content-type')).toBe(contentType);
  expect(plain.headers.get('content-encoding')).toBeNull();
  expect(plain.headers.get('x-content-type-options')).toBe('nosniff');
  expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  const bytes = Buffer.from(await plain.arrayBuffer());

  const br = await get({ 'accept-encoding': BROWSER_ENCODINGS });
  expect(br.headers.get('content-encoding')).toBe('br');
  expect(br.headers.get('vary')).toBe('accept-encoding');
  const brBody = Buffer.from(await br.arrayBuffer());
  expect(brotliDecompressSync(brBody).equals(bytes)).toBe(true);

  const gzip = await get({ 'accept-encoding': 'gzip' });
  expect(gzip.headers.get('content-encoding')).toBe('gzip');
  expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).equals(bytes)).toBe(true);

  const etag = br.headers.get('etag')!;
  expect(etag).toMatch(/^"[\w-]+-br"$/);
  const revalidated = await get({ 'accept-encoding': BROWSER_ENCODINGS, 'if-none-match': etag });
  expect(revalidated.status).toBe(304);
  expect(await revalidated.arrayBuffer()).toHaveProperty('byteLength', 0);

  const unversioned = await get({}, url.replace(/\?.*$/, ''));
  expect(unversioned.headers.get('cache-control')).toBe('no-cache');
  if (bytes.length > 100_000) expect(brBody.length).toBeLessThan(bytes.length / 2);
}
