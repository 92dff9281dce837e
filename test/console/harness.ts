import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { after } from 'node:test';
import type { Page } from 'playwright-core';
import type { Config } from '../../src/config/config.js';
import { watchedPage } from '../chromium.js';
import { listen } from '../events/sse.js';
import { testApp, TOKEN, type TestApp } from '../helpers.js';

/**
 * The web console in Debian's Chromium, against the app in-process listening on loopback: what the browser
 * tests of test/console/ share. Every request the browser makes is recorded, and every script error, CSP
 * violation or other console error of the page.
 */

export interface ConsoleUnderTest {
  t: TestApp;
  origin: string;
  page: Page;
  /** The URL of every request the browser made. */
  requests: string[];
  /** Every answer the page got: "<status> <method> <path>". */
  answers: string[];
  /** Console errors and uncaught exceptions of the page, less the browser's notes of answers that were errors (a 401, a 412: expected). */
  errors: () => string[];
}

/** The app (or `t`) listening, and a fresh Chromium on its /console (not signed in). */
export async function openConsole(
  cleanup: typeof after,
  options: { t?: TestApp; config?: Partial<Config>; path?: string } = {},
): Promise<ConsoleUnderTest> {
  // A short reconnection hint, so that a cut stream comes back soon.
  const t = options.t ?? (await testApp(cleanup, { config: { eventsRetryMs: 200, ...options.config } }));
  const origin = await listen(t.app);
  // The browser closes before its profile's folder is removed (Chromium writes there until it exits), and
  // before the app closes: the sockets it holds open with no request in them (Chromium's own) made the app's
  // close wait out its grace period, 5 s, after the tests where the browser had opened one.
  const closers: Array<() => unknown> = [];
  let closed: Promise<void> | undefined;
  const closeBrowser = () =>
    (closed ??= (async () => {
      for (const close of closers.reverse()) await close();
    })());
  t.beforeClose(closeBrowser);
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-console-'));
  cleanup(async () => {
    await closeBrowser();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  const { page, requests, errors } = await watchedPage(dir, ((close: () => unknown) => void closers.push(close)) as typeof after);
  const answers: string[] = [];
  page.on('response', (response) => answers.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`));
  await page.goto(`${origin}${options.path ?? '/console'}`);
  return { t, origin, page, requests, answers, errors: () => errors.filter((text) => !text.startsWith('Failed to load resource')) };
}

/**
 * Signs in with the token (the full-access one by default) and waits for the signed-in console. Failing, it
 * says what the page showed instead: a locator's timeout alone says only what it waited for.
 */
export async function signIn(page: Page, token: string = TOKEN): Promise<void> {
  try {
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  } catch (error) {
    const shown = await page
      .locator('body')
      .innerText({ timeout: 1000 })
      .catch((reason: unknown) => `(its text could not be read: ${String(reason)})`);
    throw new Error(`signing in failed at ${page.url()}; the page shows: ${JSON.stringify(shown.slice(0, 600))}`, { cause: error });
  }
}

/** What the tests read of a page's window, in page.evaluate (their TypeScript knows Node's globals, not the DOM's). */
export interface PageWindow {
  sessionStorage: { length: number; getItem(key: string): string | null };
  localStorage: { length: number };
  document: { cookie: string; documentElement: { scrollWidth: number; clientWidth: number } };
}

/** The text of each row of the table (its cells joined by " | "), header row and the plants' selection boxes left out. */
export async function rows(page: Page, table = page.getByRole('table')): Promise<string[]> {
  return table.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) =>
      Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null; className: string }> }).children)
        .filter((td) => td.className !== 'select')
        .map((td) => (td.textContent ?? '').trim())
        .join(' | '),
    ),
  );
}

/** The ids (the Id column) of the plants table's rows. */
export async function shownIds(page: Page): Promise<string[]> {
  return (await rows(page)).map((row) => row.split(' | ')[0]!);
}

/** Creates plants through the API, as another client would. */
export async function addPlants(t: TestApp, plants: Array<{ id: number | string; name: string; tag?: string }>): Promise<void> {
  for (const plant of plants) {
    const body = `{"id":${plant.id},"name":${JSON.stringify(plant.name)}${plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`}}`;
    const res = await t.call('POST', '/plants', { body });
    if (res.statusCode !== 200) throw new Error(`POST /plants ${body}: ${res.statusCode} ${res.payload}`);
  }
}
