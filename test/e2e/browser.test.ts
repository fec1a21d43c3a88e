import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, openBrowser } from '../support/browser.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type Served, serve } from '../support/serve.ts';

const t = setupTestApp();

/** Set UPDATE_SCREENSHOTS=1 to refresh the README's pictures from this run. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve('docs/images') : undefined;

describe('in a real browser, offline', { timeout: 90_000 }, () => {
  let served: Served;
  let browser: Browser;
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Development');
    served = await serve(t.app);
    browser = await openBrowser(served.baseUrl);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('GraphiQL opens with the development headers prefilled and runs a query', async () => {
    // given a customer, and the GraphiQL link the server prints on its first start
    const created = await t.graphql(
      'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
      { input: { name: 'Grace Hopper', handle: 'grace' } },
      { env },
    );
    expect(created.body.data.customerCreate.customer.id).toEqual(expect.any(String));
    const { page } = browser;
    await page.goto(`${served.baseUrl}/graphql?headers=${encodeURIComponent(JSON.stringify(env.headers))}`);

    // when the query is typed into the editor and run
    const editor = page.locator('.graphiql-query-editor .monaco-editor').first();
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('query Customers { customers { edges { node { name handle } } } }');
    await page.locator('.graphiql-execute-button').click();

    // then the response pane shows the customer, fetched with the prefilled token and environment
    // (Monaco renders spaces as no-break spaces)
    const responseText = async () =>
      ((await page.locator('.graphiql-response').textContent()) ?? '').replaceAll('\u00a0', ' ');
    await expect.poll(responseText, { timeout: 20_000 }).toContain('"name": "Grace Hopper"');
    expect(await responseText()).toContain('"handle": "grace"');
    expect(browser.external).toEqual([]);
  });

  it('the API reference at /docs renders every operation from /openapi.json', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/docs`);

    await page.getByText('Billing gateway', { exact: true }).first().waitFor();
    await page
      .getByRole('link', { name: /Read a customer/ })
      .first()
      .click();
    await expect.poll(() => page.locator('body').textContent()).toContain('/customers/{customerId}');
    expect(browser.external).toEqual([]);

    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'reference.png') });
  });
});
