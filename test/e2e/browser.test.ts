import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/modules/registry.ts';
import { type Browser, openBrowser } from '../support/browser.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type Served, serve } from '../support/serve.ts';

const t = setupTestApp();

/** Set UPDATE_SCREENSHOTS=1 to refresh the README's pictures from this run. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve('docs/images') : undefined;

/** `?headers=` values that break out of an inline script, a JS string, JSON or HTML when templated. */
const CRAFTED = [
  '"}</script><script>window.pwned=1;alert(1)</script>',
  `"'});window.pwned=1;alert(1);//`,
  '<img src=x onerror="window.pwned=1;alert(1)">',
];

describe('in a real browser, offline', { timeout: 120_000 }, () => {
  let served: Served;
  let browser: Browser;
  let env: TestEnvironment;
  const dialogs: string[] = [];

  beforeAll(async () => {
    env = await t.createEnvironment('Development');
    served = await serve(t.app);
    browser = await openBrowser(served.baseUrl);
    browser.page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      return dialog.dismiss();
    });
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  /** Monaco renders spaces as no-break spaces. */
  const text = async (selector: string) =>
    ((await browser.page.locator(selector).first().textContent()) ?? '').replaceAll('\u00a0', ' ');
  const openGraphiQL = async (headers: string) => {
    await browser.page.goto(`${served.baseUrl}/graphql?headers=${encodeURIComponent(headers)}`);
    await browser.page.locator('.graphiql-query-editor .monaco-editor').first().waitFor();
  };

  it('GraphiQL opens with the development headers prefilled and runs a query', async () => {
    // given a customer, and the GraphiQL link the server prints on its first start
    const created = await t.graphql(
      'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
      { input: { name: 'Grace Hopper', handle: 'grace' } },
      { env },
    );
    expect(created.body.data.customerCreate.customer.id).toEqual(expect.any(String));
    await openGraphiQL(JSON.stringify(env.headers));
    const { page } = browser;

    // when the query is typed into the editor and run
    const editor = page.locator('.graphiql-query-editor .monaco-editor').first();
    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('query Customers { customers { edges { node { name handle } } } }');
    await page.locator('.graphiql-execute-button').click();

    // then the response pane shows the customer, fetched with the prefilled token and environment,
    // by a page whose policy refused nothing it needs
    const response = () => text('.graphiql-response');
    await expect.poll(response, { timeout: 20_000 }).toContain('"name": "Grace Hopper"');
    expect(await response()).toContain('"handle": "grace"');
    expect(browser.external).toEqual([]);
    expect(browser.refused).toEqual([]);
  });

  it('GraphiQL runs a subscription and shows events as their changes commit', async () => {
    // given GraphiQL running a subscription to new customers
    await openGraphiQL(JSON.stringify(env.headers));
    const { page } = browser;
    const editor = page.locator('.graphiql-query-editor .monaco-editor').first();
    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('subscription Live { events(types: [CUSTOMER_CREATED]) { type data } }');
    await page.locator('.graphiql-execute-button').click();
    // the stream is open once the server holds a listening connection for it
    await expect
      .poll(
        async () =>
          (
            await t.sql(
              `select count(*)::int as n from pg_stat_activity where query = 'listen billing_event'`,
            )
          )[0]?.n,
        {
          timeout: 20_000,
        },
      )
      .toBeGreaterThan(0);

    // when a customer is created through the API
    await t.graphql(
      'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
      { input: { name: 'Live Lovelace' } },
      { env },
    );

    // then the response pane shows its event
    const response = () => text('.graphiql-response');
    await expect.poll(response, { timeout: 20_000 }).toContain('"name": "Live Lovelace"');
    expect(await response()).toContain('"type": "CUSTOMER_CREATED"');
    expect(browser.refused).toEqual([]);
    await page.locator('.graphiql-execute-button').click();
  });

  it('GraphiQL shows a crafted ?headers= as text and runs none of it; its policy refuses inline script', async () => {
    for (const crafted of CRAFTED) {
      // when GraphiQL is opened from a crafted link
      await browser.page.goto(`${served.baseUrl}/graphql?headers=${encodeURIComponent(crafted)}`);

      // then no script of the link ran, no dialog opened, and the headers are only text in their editor
      expect(await browser.page.evaluate(() => (window as any).pwned), crafted).toBeUndefined();
      expect(dialogs).toEqual([]);
      await browser.page.getByRole('button', { name: 'Headers' }).click();
      const headersEditor = '.graphiql-editor-tool .monaco-editor:visible';
      await expect.poll(() => text(headersEditor), { timeout: 10_000 }).toContain(crafted.slice(0, 20));
      expect(await browser.page.evaluate(() => (window as any).pwned), crafted).toBeUndefined();
    }
    expect(browser.refused).toEqual([]);

    // and were markup to get into the page all the same, its policy would not run an inline script
    await browser.page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.pwned = 1';
      document.body.append(script);
    });
    expect(await browser.page.evaluate(() => (window as any).pwned)).toBeUndefined();
    expect(browser.refused).toEqual([expect.stringContaining("script-src 'self'")]);
    browser.refused.length = 0;
  });

  it('the API reference at /docs renders every operation from /openapi.json', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/docs`);

    // when an operation is opened
    await page.getByRole('heading', { name: /Billing gateway/ }).waitFor();
    await page.locator('.opblock-summary', { hasText: 'Read a customer' }).click();

    // then its parameters show, read from /openapi.json on this server, with nothing refused or fetched elsewhere
    const operation = page.locator('.opblock.is-open');
    await expect.poll(() => operation.textContent()).toContain('x-environment');
    expect(await operation.textContent()).toContain('customerId');
    expect(await page.locator('.opblock').count()).toBe(routes.length);
    expect(browser.external).toEqual([]);
    expect(browser.refused).toEqual([]);

    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'reference.png') });
  });
});
