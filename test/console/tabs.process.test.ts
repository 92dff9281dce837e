import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import type { TestApp } from '../helpers.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs } from '../toolkit.js';

const skip = needs("the console's browser tests of several tabs", browserSkip);

/**
 * Several console tabs in one browser. Each signed-in tab follows the change feed, a connection held open,
 * and a browser gives a host six HTTP/1.1 connections: with six tabs open, a seventh tab, and every request
 * of the six, waited forever. A hidden tab ends its stream, and resumes it when shown, missing nothing.
 */

/**
 * Shows or hides the page, as switching tabs does: headless Chromium shows every page at once, so the test
 * tells the page what a browser with tabs would (its visibilityState, and the visibilitychange event).
 */
async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((hide) => {
    const { document, Event: PageEvent } = globalThis as unknown as {
      document: { dispatchEvent(event: unknown): void };
      Event: new (type: string) => unknown;
    };
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hide ? 'hidden' : 'visible') });
    document.dispatchEvent(new PageEvent('visibilitychange'));
  }, hidden);
}

/** The header's word on the feed. */
async function feedSays(page: Page, text: string | RegExp): Promise<void> {
  await page.getByRole('banner').getByRole('status').filter({ hasText: text }).waitFor({ timeout: 30_000 });
}

/** The feed's event ids, oldest first. */
async function listed(t: TestApp): Promise<string[]> {
  const events = parseJson((await t.call('GET', '/events?limit=1000')).payload) as Array<{ id: string }>;
  return events.map(({ id }) => id);
}

describe('the console: several tabs', { skip, timeout: 240_000 }, () => {
  it('six hidden tabs leave the browser connections: a seventh tab loads and searches; a tab shown again catches up', async () => {
    const first = await openConsole(after, { path: '/console#changes' });
    const { t, origin } = first;
    await addPlants(t, [{ id: 1, name: 'Fern' }]);
    const tabs: Page[] = [first.page];
    for (let i = 1; i < 6; i++) {
      const tab = await first.page.context().newPage();
      await tab.goto(`${origin}/console#changes`);
      tabs.push(tab);
    }
    for (const tab of tabs) {
      await signIn(tab);
      await feedSays(tab, /^Live$/);
    }
    // Each goes to the background: its stream ends (after a few seconds hidden).
    for (const tab of tabs) await setHidden(tab, true);
    for (const tab of tabs) await feedSays(tab, 'Live: paused while this tab is hidden');

    // Written meanwhile, by another client.
    await addPlants(t, [
      { id: 2, name: 'Ivy' },
      { id: 3, name: 'Aloe' },
    ]);

    const seventh = await first.page.context().newPage();
    await seventh.goto(`${origin}/console`, { timeout: 30_000 });
    await signIn(seventh);
    await seventh.getByRole('searchbox', { name: 'Search' }).fill('Ivy');
    await seventh.getByRole('button', { name: 'Search' }).click();
    await seventh.getByRole('cell', { name: 'Ivy', exact: true }).waitFor({ timeout: 30_000 });
    assert.deepEqual(await shownIds(seventh), ['2']);

    // The first tab shown again: its stream resumes after the last event it had, and lists what it missed.
    await setHidden(first.page, false);
    await feedSays(first.page, /^Live$/);
    const all = await listed(t);
    await first.page.locator(`tr[data-event-id="${all.at(-1)!}"]`).waitFor({ timeout: 30_000 });
    const shown = await first.page
      .locator('table.changes tbody tr')
      .evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { eventId: string } }).dataset.eventId));
    assert.deepEqual(shown, all.slice(1).reverse(), 'the two events written while hidden, once each (the first came before sign-in)');
    assert.deepEqual(first.errors(), []);
  });
});
