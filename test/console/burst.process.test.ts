import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import type { TestApp } from '../helpers.js';
import { openConsole, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's browser tests of bursts of changes", browserSkip);

/** The most events the Changes view keeps (console/src/changes.tsx). */
const CHANGES_KEPT = 1000;

/** Imports plants `from`…`from + count - 1` in one request: as many events, committed at once. */
async function importPlants(t: TestApp, from: number, count: number): Promise<void> {
  const body = Array.from({ length: count }, (_, i) => `{"id":${from + i},"name":"Burst ${from + i}"}\n`).join('');
  const res = await t.call('POST', '/plants/import', { body, headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(res.statusCode, 200, res.payload);
}

/** The Changes view's rows' event ids, newest first, as shown. */
async function eventIds(page: Page): Promise<string[]> {
  return page
    .locator('table.changes tbody tr')
    .evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { eventId: string } }).dataset.eventId));
}

/** The ids of the feed's newest `count` events, newest first (GET /events pages oldest first). */
async function newestEvents(t: TestApp, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let after = ''; ;) {
    const res = await t.call('GET', `/events?limit=1000${after === '' ? '' : `&after=${after}`}`);
    const page = JSON.parse(res.payload) as Array<{ id: string }>;
    if (page.length === 0) break;
    ids.push(...page.map((event) => event.id));
    after = ids.at(-1)!;
  }
  return ids.slice(-count).reverse();
}

/** Signs in and opens the Changes view, once it follows the feed live. */
async function openChanges(page: Page): Promise<void> {
  await signIn(page);
  await page.getByRole('link', { name: 'Changes' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /^Live$/ })
    .waitFor();
}

describe('the console: a burst of changes', { skip, timeout: 300_000 }, () => {
  it('draws the Changes view a few times for an import, not once per event (which froze the tab for a minute)', async (context) => {
    const { t, page, errors } = await openConsole(after);
    await openChanges(page);
    // Every batch of changes the page makes to its document, counted (a render is one).
    await page.evaluate(() => {
      const counted = globalThis as unknown as { drawn: number };
      counted.drawn = 0;
      const { MutationObserver: Observer, document } = globalThis as unknown as {
        MutationObserver: new (callback: () => void) => { observe(node: unknown, options: object): void };
        document: { body: unknown };
      };
      new Observer(() => counted.drawn++).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    const events = CHANGES_KEPT + 500;
    await importPlants(t, 1, events);
    const newest = await newestEvents(t, CHANGES_KEPT);
    await until(async () => (await eventIds(page))[0] === newest[0], 'the newest event shown', { timeoutMs: 120_000 });
    assert.deepEqual(await eventIds(page), newest, 'the newest thousand, newest first');
    const drawn = await page.evaluate(() => (globalThis as unknown as { drawn: number }).drawn);
    context.diagnostic(`drawn ${drawn} times for ${events} events`);
    // Drawn once per event, it was 1,500 times; in batches, a few dozen at most however slowly they come.
    assert.ok(drawn <= events / 10, `drawn ${drawn} times for ${events} events`);
    assert.deepEqual(errors(), []);
  });

  it('Pause keeps the list shown while more events than the list keeps arrive, and counts them all', async () => {
    const { t, page, errors } = await openConsole(after);
    await openChanges(page);
    await importPlants(t, 1, 5);
    const before = await newestEvents(t, 5);
    await until(async () => (await eventIds(page)).join() === before.join(), 'the first five changes');

    await page.getByRole('button', { name: 'Pause' }).click();
    await importPlants(t, 100, CHANGES_KEPT + 100);
    await page
      .getByRole('status')
      .filter({ hasText: 'Paused: 1,100 new events waiting; Resume shows the newest 1,000.' })
      .waitFor({ timeout: 60_000 });
    assert.deepEqual(await eventIds(page), before, 'the paused list as it was (it emptied)');
    await page.getByText('No changes since you signed in.').waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Resume' }).click();
    assert.deepEqual(await eventIds(page), await newestEvents(t, CHANGES_KEPT));
    // No type chosen: the list says so, not that nothing changed.
    for (const type of ['plant.created', 'plant.updated', 'plant.deleted']) await page.getByRole('checkbox', { name: type }).uncheck();
    await page.getByText('None of the changes listed is of the event types chosen.').waitFor();
    assert.equal(await page.getByText('No changes since you signed in.').count(), 0);
    assert.deepEqual(errors(), []);
  });
});
