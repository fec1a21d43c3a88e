import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/**
 * The Chromium at CHROMIUM_PATH, else Debian's when installed, else the headless Chromium that
 * @sparticuz/chromium ships inside its npm package (unpacked to the temp directory on first use), so the
 * browser tests need nothing but `npm ci`. playwright-core cannot download a browser of its own here.
 */
async function chromiumExecutable(): Promise<string> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured))
      throw new Error(`CHROMIUM_PATH points at ${configured}, which does not exist`);
    return configured;
  }
  if (existsSync(SYSTEM_CHROMIUM)) return SYSTEM_CHROMIUM;
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}

export type Browser = {
  page: Page;
  /** Every URL the page tried to load from anywhere but the app; such requests are refused. */
  external: string[];
  /** What the page's Content-Security-Policy refused, as Chromium reports it on the console. */
  refused: string[];
  close: () => Promise<void>;
};

/**
 * Headless Chromium with a fresh profile that may reach only `origin`, so a page that needs the
 * internet fails here as it would on a machine without it.
 */
export async function openBrowser(origin: string): Promise<Browser> {
  const executablePath = await chromiumExecutable();
  const profile = await mkdtemp(path.join(tmpdir(), 'billing-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    external.push(url);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const refused: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) refused.push(message.text());
  });
  return {
    page,
    external,
    refused,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
