import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's bulk delete browser tests", browserSkip);

/** Whether the page's "Select all on this page" box is checked, mixed (indeterminate), or neither. */
const pageBox = (page: import('playwright-core').Page) =>
  page
    .getByRole('checkbox', { name: 'Select all on this page' })
    .evaluate((box) => ((box as unknown as { indeterminate: boolean }).indeterminate ? 'mixed' : (box as unknown as { checked: boolean }).checked));

describe('the console: deleting the plants selected', { skip, timeout: 180_000 }, () => {
  it('asks how many, deletes each at the version it was selected at, and lists by name those changed or gone meanwhile', async () => {
    const { t, page, origin, requests, answers, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Alpha', tag: 'a' },
      { id: 2, name: 'Bravo' },
      { id: 3, name: 'Charlie' },
      { id: 4, name: 'Delta', tag: 'd' },
      { id: 5, name: 'Echo' },
    ]);
    const deletes = new Map<string, string | undefined>();
    page.on('request', (request) => {
      if (request.method() === 'DELETE') deletes.set(new URL(request.url()).pathname, request.headers()['if-match']);
    });
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1,2,3,4,5', 'the plants');
    assert.equal(await page.getByRole('button', { name: 'Delete selected' }).isDisabled(), true, 'nothing selected yet');

    const versions: Record<string, string> = {};
    for (const [id, name] of [
      [1, 'Alpha'],
      [2, 'Bravo'],
      [3, 'Charlie'],
      [4, 'Delta'],
    ] as const) {
      versions[id] = String((await t.call('GET', `/plants/${id}`)).headers.etag);
      await page.getByRole('checkbox', { name: `Select ${name}` }).check();
    }
    await page.getByText('4 plants selected.').waitFor();
    assert.equal(await pageBox(page), 'mixed');
    // Each selected plant's version is read as it is selected.
    await until(async () => [1, 2, 3, 4].every((id) => answers.includes(`200 GET /plants/${id}`)), 'the versions read');

    // Meanwhile, another client: renames Bravo, deletes Charlie, writes Delta again as it was (a new version, the same content).
    assert.equal((await t.call('PATCH', '/plants/2', { body: { name: 'Bravo (theirs)' } })).statusCode, 200);
    assert.equal((await t.call('DELETE', '/plants/3')).statusCode, 204);
    assert.equal((await t.call('PUT', '/plants/4', { body: { name: 'Delta', tag: 'd' } })).statusCode, 200);
    // The table follows the feed; the selection stays.
    await until(async () => (await shownIds(page)).join() === '1,2,4,5', 'Charlie gone from the table');
    await page.getByText('4 plants selected.').waitFor();

    // Cancel first: nothing is deleted.
    await page.getByRole('button', { name: 'Delete selected' }).click();
    let dialog = page.getByRole('dialog', { name: 'Delete 4 plants?' });
    assert.equal(
      await dialog.getByRole('paragraph').first().innerText(),
      'These 4 plants will be deleted: Alpha, Bravo, Charlie, Delta. This cannot be undone.',
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(deletes.size, 0);
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 200);

    await page.getByRole('button', { name: 'Delete selected' }).click();
    dialog = page.getByRole('dialog', { name: 'Delete 4 plants?' });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 1 of 4 plants.' }).waitFor();
    const failures = page.getByRole('alert').filter({ hasText: 'plants were not deleted' });
    assert.equal(await failures.getByRole('paragraph').innerText(), '3 plants were not deleted:');
    assert.deepEqual(await failures.getByRole('listitem').allInnerTexts(), [
      'Bravo (plant 2): changed meanwhile (by someone else, since it was shown), so it was left as it is.',
      'Charlie (plant 3): gone meanwhile (deleted by someone else).',
      'Delta (plant 4): changed meanwhile (by someone else, since it was shown), so it was left as it is.',
    ]);

    // Each DELETE went with If-Match: the version of its plant when it was selected.
    assert.deepEqual(Object.fromEntries(deletes), {
      '/plants/1': versions[1],
      '/plants/2': versions[2],
      '/plants/3': versions[3],
      '/plants/4': versions[4],
    });
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404);
    assert.equal((await t.call('GET', '/plants/2')).json().name, 'Bravo (theirs)');
    assert.equal((await t.call('GET', '/plants/4')).statusCode, 200);
    assert.equal((await t.call('GET', '/plants/5')).statusCode, 200);
    await until(async () => (await shownIds(page)).join() === '2,4,5', 'the table after');
    assert.equal(await page.getByRole('button', { name: 'Delete selected' }).isDisabled(), true, 'the selection is cleared');

    for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
    assert.deepEqual(errors(), []);
  });

  it('selects a whole page with one box, and deletes it', async () => {
    const { t, page, errors } = await openConsole(after, { path: '/console#plants?limit=10' });
    await addPlants(
      t,
      Array.from({ length: 12 }, (_, i) => ({ id: i + 1, name: `Seedling ${i + 1}` })),
    );
    await signIn(page);
    await until(async () => (await shownIds(page)).length === 10, 'a page of ten');
    const all = page.getByRole('checkbox', { name: 'Select all on this page' });
    await all.check();
    await page.getByText('10 plants selected.').waitFor();
    for (let id = 1; id <= 10; id++) assert.equal(await page.getByRole('checkbox', { name: `Select Seedling ${id}`, exact: true }).isChecked(), true);
    await page.getByRole('checkbox', { name: 'Select Seedling 3', exact: true }).uncheck();
    assert.equal(await pageBox(page), 'mixed');
    await all.click();
    assert.equal(await pageBox(page), true);
    await all.click();
    assert.equal(await pageBox(page), false);
    assert.equal(await page.getByRole('button', { name: 'Delete selected' }).isDisabled(), true);
    await all.check();

    await page.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('dialog', { name: 'Delete 10 plants?' }).getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 10 plants.' }).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0, 'no failure to list');
    await until(async () => (await shownIds(page)).join() === '11,12', 'the two left');
    assert.deepEqual(
      (await t.call('GET', '/plants')).json().map((plant: { id: number }) => plant.id),
      [11, 12],
    );
    assert.deepEqual(errors(), []);
  });

  it('deletes nothing that changed before it was selected, though the table did not show it yet (no live updates)', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Fern' },
      { id: 2, name: 'Ivy' },
    ]);
    const deletes: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'DELETE') deletes.push(new URL(request.url()).pathname);
    });
    // Without events:read the table is not refreshed by the feed: its rows can be older than the plants.
    await signIn(page, await t.tokenWith('plants:read', 'plants:write'));
    await until(async () => (await shownIds(page)).join() === '1,2', 'the plants');
    assert.equal((await t.call('PATCH', '/plants/1', { body: { tag: 'changed' } })).statusCode, 200);
    await page.getByRole('checkbox', { name: 'Select Fern' }).check();
    await page.getByRole('checkbox', { name: 'Select Ivy' }).check();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('dialog', { name: 'Delete 2 plants?' }).getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 1 of 2 plants.' }).waitFor();
    await page
      .getByRole('alert')
      .getByRole('listitem')
      .filter({ hasText: 'Fern (plant 1): changed meanwhile (by someone else, since it was shown), so it was left as it is.' })
      .waitFor();
    assert.deepEqual((await t.call('GET', '/plants/1')).json(), { id: 1, name: 'Fern', tag: 'changed' });
    assert.equal((await t.call('GET', '/plants/2')).statusCode, 404);
    assert.deepEqual(deletes, ['/plants/2'], 'no DELETE sent for the plant changed');
    assert.deepEqual(errors(), []);
  });

  it('offers no selection to a token that cannot write', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 1, name: 'Fern' }]);
    await signIn(page, await t.tokenWith('plants:read'));
    await until(async () => (await shownIds(page)).join() === '1', 'the plant');
    assert.equal(await page.getByRole('checkbox').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete selected' }).count(), 0);
    assert.deepEqual(errors(), []);
  });
});
