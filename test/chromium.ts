import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { after } from 'node:test';
import { chromium, type BrowserContext, type ConsoleMessage, type Page, type Request } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core (which never downloads a browser of its own), for the
 * tests that need a real browser. Without /usr/bin/chromium those tests are skipped, loudly.
 */
export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests are skipped here, or false when Chromium is installed. */
export const browserSkip: string | false = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (Debian package chromium; .ci/run installs it)`;

// Playwright adds --user-data-dir itself, from launchPersistentContext's first argument (a fresh directory).
// Without the background-networking flags Chromium keeps trying to reach Google's hosts, which this machine refuses.
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with a fresh profile in `dir`; the caller closes it. */
export function launchChromium(dir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/**
 * A page in a fresh headless Chromium (closed when the test file ends), recording the URL of every request
 * the browser makes and every console error and uncaught exception.
 */
export async function watchedPage(dir: string, cleanup: typeof after): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const browser = await launchChromium(dir);
  cleanup(() => browser.close());
  const requests: string[] = [];
  const errors: string[] = [];
  browser.on('request', (request: Request) => requests.push(request.url()));
  const page = await browser.newPage();
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, requests, errors };
}
