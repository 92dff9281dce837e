import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import type { Page, Request } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { TOKEN, type TestApp } from '../helpers.js';
import { addPlants, openConsole, rows, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's live browser tests", browserSkip);

/** The feed as GET /events lists it: [id, type], in commit order. */
async function listed(t: TestApp): Promise<Array<[string, string]>> {
  const events = parseJson((await t.call('GET', '/events?limit=1000')).payload) as Array<{ id: string; type: string }>;
  return events.map(({ id, type }) => [id, type]);
}

/** The Changes view's rows as [event id, type], oldest first (the view shows the newest first). */
async function changesShown(page: Page): Promise<Array<[string, string]>> {
  const shown = await page
    .getByRole('table')
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { eventId: string } }).dataset.eventId));
  const texts = await rows(page);
  return shown.map((id, i) => [id, texts[i]!.split(' | ')[1]!] as [string, string]).reverse();
}

/** Waits until the console says it follows the feed live. */
async function live(page: Page): Promise<void> {
  await page
    .getByRole('status')
    .filter({ hasText: /^Live$/ })
    .waitFor();
}

/** Signs in and opens the Changes view, once it follows the feed live. */
async function openChanges(page: Page): Promise<void> {
  await signIn(page);
  await page.getByRole('link', { name: 'Changes' }).click();
  await live(page);
}

describe('the console: live', { skip, timeout: 180_000 }, () => {
  it('shows plants written by another client without a reload: created, changed, deleted', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 1, name: 'Already here' }]);
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1', 'the first plant');
    await live(page);

    // Written by another client (the API, in-process): it appears within a second (waited for up to a few seconds).
    await addPlants(t, [{ id: 2, name: 'Arrived live', tag: 'new' }]);
    await until(async () => (await rows(page)).includes('2 | Arrived live | new | Edit plant 2Delete plant 2'), 'the new plant', { timeoutMs: 5000 });
    assert.equal((await t.call('PATCH', '/plants/1', { body: { name: 'Renamed elsewhere' } })).statusCode, 200);
    await until(async () => (await rows(page))[0]!.startsWith('1 | Renamed elsewhere |'), 'the change', { timeoutMs: 5000 });
    assert.equal((await t.call('DELETE', '/plants/2')).statusCode, 204);
    await until(async () => (await shownIds(page)).join() === '1', 'the plant deleted', { timeoutMs: 5000 });
    assert.deepEqual(errors(), []);
  });

  it('reloads the page at least once a second while writes keep coming (it waited for them to pause)', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 1, name: 'Busy', tag: 'start' }]);
    await signIn(page);
    await until(async () => (await rows(page))[0]?.startsWith('1 | Busy | start') === true, 'the first plant');
    await live(page);
    // Another client writes back to back for up to 10 s: far more often than the console's pause of 150 ms.
    let writing = true;
    const writer = (async () => {
      const stop = Date.now() + 10_000;
      for (let n = 0; writing && Date.now() < stop; n++) await t.call('PATCH', '/plants/1', { body: { tag: `w${n}` } });
    })();
    try {
      await until(async () => /^1 \| Busy \| w\d+/.test((await rows(page))[0] ?? ''), 'a change shown while the writes go on', { timeoutMs: 5000 });
    } finally {
      writing = false;
      await writer;
    }
    assert.deepEqual(errors(), []);
  });

  it('follows the feed with the token in the Authorization header, and resumes with Last-Event-ID after a drop, missing nothing', async () => {
    const { t, page, errors } = await openConsole(after);
    const streams: Request[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/events') streams.push(request);
    });
    await openChanges(page);
    await page.getByText('No changes since you signed in.').waitFor();

    await addPlants(t, [
      { id: 1, name: 'One' },
      { id: '9007199254740993', name: 'Beyond 2^53', tag: 'big' },
    ]);
    assert.equal((await t.call('PATCH', '/plants/1', { body: { tag: 'changed' } })).statusCode, 200);
    await until(async () => (await changesShown(page)).length === 3, 'three changes');
    assert.deepEqual(await changesShown(page), await listed(t));
    assert.deepEqual(
      (await rows(page)).map((row) => row.split(' | ').slice(1, 5).join(' | ')),
      ['plant.updated | 1 | One | changed', 'plant.created | 9007199254740993 | Beyond 2^53 | big', 'plant.created | 1 | One | '],
    );

    // Every connection is cut, as a network drop would: the console reconnects by itself, after the last event it got.
    const before = (await listed(t)).at(-1)![0];
    t.app.server.closeAllConnections();
    await addPlants(t, [{ id: 3, name: 'Three' }]);
    assert.equal((await t.call('DELETE', '/plants/1')).statusCode, 204);
    await addPlants(t, [{ id: 4, name: 'Four' }]);
    await until(async () => (await changesShown(page)).length === 6, 'the changes made across the cut');
    assert.deepEqual(await changesShown(page), await listed(t), 'every event once, in commit order');
    await live(page);

    assert.ok(streams.length >= 2, `${streams.length} connections`);
    const headers = await Promise.all(streams.map((request) => request.allHeaders()));
    for (const [i, sent] of headers.entries()) {
      assert.equal(sent.authorization, `Bearer ${TOKEN}`, `connection ${i}`);
      assert.equal(sent.accept, 'text/event-stream', `connection ${i}`);
      assert.equal(new URL(streams[i]!.url()).search, '', 'nothing in the URL: no access_token');
    }
    assert.equal(headers[0]!['last-event-id'], undefined, 'the first connection starts from now');
    assert.equal(headers[1]!['last-event-id'], before, 'the reconnection resumes after the last event it got');
    assert.deepEqual(errors(), []);
  });

  it('Changes: pauses and resumes, none skipped, and shows the event types chosen', async () => {
    const { t, page, errors } = await openConsole(after);
    await openChanges(page);
    await addPlants(t, [{ id: 1, name: 'One' }]);
    await until(async () => (await changesShown(page)).length === 1, 'the first change');

    await page.getByRole('button', { name: 'Pause' }).click();
    await addPlants(t, [
      { id: 2, name: 'Two' },
      { id: 3, name: 'Three' },
    ]);
    assert.equal((await t.call('DELETE', '/plants/1')).statusCode, 204);
    await page.getByRole('status').filter({ hasText: 'Paused: 3 new events waiting.' }).waitFor();
    assert.equal((await changesShown(page)).length, 1, 'the list stays as it was while paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    assert.deepEqual(await changesShown(page), await listed(t));

    await page.getByRole('checkbox', { name: 'plant.created' }).uncheck();
    assert.deepEqual(
      (await changesShown(page)).map(([, type]) => type),
      ['plant.deleted'],
    );
    await page.getByRole('checkbox', { name: 'plant.created' }).check();
    assert.equal((await changesShown(page)).length, 4);
    assert.deepEqual(errors(), []);
  });
});
