import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import type { Page } from 'playwright-core';
import { createToken } from '../../src/auth/tokens.js';
import { Metrics } from '../../src/metrics/registry.js';
import { browserSkip } from '../chromium.js';
import { testApp, TOKEN, type TestApp } from '../helpers.js';
import { addPlants, openConsole, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's browser tests of a shared change feed", browserSkip);

/**
 * Tabs of one browser shown at once share one change-feed stream: six tabs, each with its own, held all six
 * connections a browser gives a host over HTTP/1.1, and a seventh request waited forever.
 */

/** The event ids the tab's Changes view lists, oldest first. */
async function listedIn(page: Page): Promise<string[]> {
  const ids = await page
    .locator('table.changes tbody tr')
    .evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { eventId: string } }).dataset.eventId));
  return ids.reverse();
}

/** The feed's event ids, oldest first. */
async function feedIds(t: TestApp): Promise<string[]> {
  return (parseJson((await t.call('GET', '/events?limit=1000')).payload) as Array<{ id: string }>).map(({ id }) => id);
}

/** The count of the service's open event streams, from its metrics. */
async function openStreams(metrics: Metrics): Promise<number> {
  return Number(/plant_store_event_streams (\d+)$/m.exec(await metrics.registry.getSingleMetricAsString('plant_store_event_streams'))?.[1]);
}

describe('the console: tabs share one change-feed stream', { skip, timeout: 240_000 }, () => {
  it('six tabs shown at once hold one stream; closing the tab that holds it hands it on, nothing missed or doubled', async () => {
    const metrics = new Metrics();
    const t = await testApp(after, { config: { eventsRetryMs: 200 }, metrics });
    const streams = async () =>
      Number(/plant_store_event_streams (\d+)$/m.exec(await metrics.registry.getSingleMetricAsString('plant_store_event_streams'))?.[1]);
    const first = await openConsole(after, { t, path: '/console#changes' });
    const { origin } = first;
    // Which tab asked for a stream, and after which event (?after=, or Last-Event-ID on a reconnection).
    const asked: Array<{ page: Page; after: string | null | undefined }> = [];
    const watch = (page: Page) =>
      page.on('request', (request) => {
        if (request.headers()['accept'] !== 'text/event-stream') return;
        asked.push({ page, after: new URL(request.url()).searchParams.get('after') ?? request.headers()['last-event-id'] });
      });
    watch(first.page);
    const tabs: Page[] = [first.page];
    for (let i = 1; i < 6; i++) {
      const tab = await first.page.context().newPage();
      watch(tab);
      await tab.goto(`${origin}/console#changes`);
      tabs.push(tab);
    }
    for (const tab of tabs) {
      await signIn(tab);
      await tab
        .getByRole('banner')
        .getByRole('status')
        .filter({ hasText: /^Live$/ })
        .waitFor();
    }
    assert.equal(await streams(), 1, 'one stream for the six tabs');

    // Each tab lists each event, once.
    const everyTabListsAll = async (label: string) => {
      const all = await feedIds(t);
      await until(async () => {
        for (const tab of tabs) if ((await listedIn(tab)).join() !== all.join()) return false;
        return true;
      }, label);
    };
    await addPlants(t, [{ id: 1, name: 'Fern' }]);
    await everyTabListsAll('the first event in every tab');

    // A seventh tab loads and searches: connections are left.
    const seventh = await first.page.context().newPage();
    await seventh.goto(`${origin}/console`);
    await signIn(seventh);
    await seventh.getByRole('cell', { name: 'Fern', exact: true }).waitFor();
    await seventh.close();

    // The tab holding the stream closes; events written at once reach every other tab, through the next one.
    for (let round = 0; round < 2; round++) {
      const leader = asked.at(-1)!.page;
      const before = asked.length;
      const had = (await feedIds(t)).at(-1);
      tabs.splice(tabs.indexOf(leader), 1);
      await leader.close();
      await addPlants(t, [{ id: 10 + round, name: `Written as tab ${round} closed` }]);
      await until(() => asked.length > before, 'another tab taking the stream over');
      assert.equal(asked.at(-1)!.after, had, 'resumed after the last event had');
      await everyTabListsAll(`every event in every tab, round ${round}`);
      await until(async () => (await streams()) === 1, 'one stream again');
    }
    assert.deepEqual(first.errors(), []);
  });

  it('shares a stream only between tabs of one token; a token revoked signs out every tab of it, the others stay', async () => {
    const metrics = new Metrics();
    const t = await testApp(after, { config: { eventsRetryMs: 200 }, metrics });
    const { page, origin, errors } = await openConsole(after, { t });
    const { secret, record } = await createToken(t.store.tokens, 'two tabs', ['plants:read', 'events:read']);
    const second = await page.context().newPage();
    const other = await page.context().newPage();
    for (const [tab, token] of [
      [page, secret],
      [second, secret],
      [other, TOKEN],
    ] as const) {
      if (tab !== page) await tab.goto(`${origin}/console`);
      await signIn(tab, token);
      await tab
        .getByRole('banner')
        .getByRole('status')
        .filter({ hasText: /^Live$/ })
        .waitFor();
    }
    await until(async () => (await openStreams(metrics)) === 2, 'one stream per token');
    assert.equal(await t.store.tokens.revoke(record.id), true);
    for (const tab of [page, second]) {
      await tab.getByRole('status').filter({ hasText: 'Signed out: the service no longer accepts this token' }).waitFor({ timeout: 30_000 });
    }
    await addPlants(t, [{ id: 1, name: 'Seen by the other token' }]);
    await other.getByRole('cell', { name: 'Seen by the other token', exact: true }).waitFor();
    assert.equal(await other.getByRole('button', { name: 'Sign out' }).isVisible(), true);
    await until(async () => (await openStreams(metrics)) === 1, "the revoked token's stream ended");
    assert.deepEqual(errors(), []);
  });
});
