import { NOSNIFF } from './assets.ts';

/**
 * The Content-Security-Policy of every HTML page: scripts, styles, fetches and workers from this origin
 * only, no inline or evaluated script (so markup slipped into a page cannot run), no framing (no
 * clickjacking), no `<base>` or form posts elsewhere. Styles may be inline because the editors and
 * components of both pages set them at run time; images and fonts may be `data:` URLs, as their
 * stylesheets embed icons that way.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "connect-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * An HTML page with the headers every page gets. The GraphiQL link carries a token in its query string,
 * so no Referer is ever sent, and the page is revalidated rather than kept in a shared cache.
 */
export function htmlResponse(html: string): Response {
  return new Response(html, {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
      ...NOSNIFF,
    },
  });
}

/**
 * JSON to put inside a `<script type="application/json">` data block: `<` escaped, so no value can close
 * the element or open a comment, whatever it holds.
 */
export function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replaceAll('<', '\\u003c');
}
