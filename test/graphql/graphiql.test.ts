import { describe, expect, it } from 'vitest';
import { setupTestApp } from '../support/harness.ts';
import {
  expectCompressedAsset,
  expectNoInlineScript,
  expectPageHeaders,
  linkedAssets,
} from '../support/pages.ts';

/** Headers configured on the server that would close the data block if written into the page as they are. */
const CONFIGURED = { 'x-note': '</script><script>window.pwned = 1</script><!--' };
const t = setupTestApp({ graphiqlHeaders: CONFIGURED });

const openGraphiQL = (query = '') =>
  t.app.fetch(`http://test/graphql${query}`, { headers: { accept: 'text/html' } });

describe('GraphiQL page', () => {
  it('writes nothing of the link into the page, so a crafted ?headers= cannot add markup or script', async () => {
    // given a link whose headers would break out of an inline script, a JS string or JSON
    const env = await t.createEnvironment();
    for (const crafted of [
      '</script><script>window.pwned=1</script>',
      '"});window.pwned=1;//',
      `${JSON.stringify(env.headers)}<img src=x onerror=alert(1)>`,
    ]) {
      // when GraphiQL is opened with it
      const response = await openGraphiQL(`?headers=${encodeURIComponent(crafted)}`);

      // then the page is the same as without it: the page's script reads the link itself
      expectPageHeaders(response);
      const html = await response.text();
      expect(html).not.toContain('pwned=1');
      expect(html).not.toContain('onerror');
      expect(html).not.toContain(env.token);
      expectNoInlineScript(html);
    }
  });

  it("escapes the server's own options in its JSON data block", async () => {
    const html = await (await openGraphiQL()).text();

    expect(html).not.toContain('<script>window.pwned');
    expect(html).not.toContain('<!--');
    const data = html.match(/<script type="application\/json" id="graphiql-options">([^<]*)<\/script>/);
    const options = JSON.parse(data![1]!);
    expect(JSON.parse(options.graphiql.headers)).toEqual(CONFIGURED);
  });

  it('is a small page that links its script, styles, icon and Monaco workers as compressed, cached files', async () => {
    const html = await (await openGraphiQL()).text();
    expect(html.length).toBeLessThan(4_000);
    const options = JSON.parse(html.match(/id="graphiql-options">([^<]*)</)![1]!);
    const workers: string[] = Object.values(options.workers);
    expect(workers).toHaveLength(3);

    const linked = linkedAssets(html);
    expect(linked.map((url) => url.replace(/\?v=[\w-]+$/, ''))).toEqual([
      '/graphiql/favicon.ico',
      '/graphiql/graphiql.css',
      '/graphiql/start.js',
      '/graphiql/graphiql.js',
    ]);
    const types: Record<string, string> = {
      ico: 'image/x-icon',
      css: 'text/css; charset=utf-8',
      js: 'text/javascript; charset=utf-8',
    };
    for (const url of [...linked, ...workers]) {
      await expectCompressedAsset(t.app, url, types[url.replace(/\?.*$/, '').split('.').pop()!]!);
    }
  });

  it('answers other paths under /graphiql/ as not found', async () => {
    const response = await t.app.fetch('http://test/graphiql/../../package.json');
    expect(response.status).toBe(404);
    expect((await t.app.fetch('http://test/graphiql/graphiql.js.map')).status).toBe(404);
  });
});
