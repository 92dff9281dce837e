import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, rows, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's edit conflict tests", browserSkip);

/** Opens the edit form of plant `id` and waits until it has read the stored plant (its ETag). */
async function edit(page: Page, id: number) {
  await page.getByRole('button', { name: `Edit plant ${id}`, exact: true }).click();
  const dialog = page.getByRole('dialog', { name: `Edit plant ${id}` });
  await until(() => dialog.getByRole('button', { name: 'Save' }).isEnabled(), 'the stored plant read into the form');
  return dialog;
}

describe('the console: Keep mine in an edit conflict', { skip, timeout: 180_000 }, () => {
  it("saves only the fields this user changed, over the stored version: the other person's other changes stay", async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 7, name: 'Fern', tag: 'green' },
      { id: 8, name: 'Ivy', tag: 'climber' },
    ]);
    const writes: string[] = [];
    page.on('request', (request) => {
      if (['PUT', 'PATCH'].includes(request.method())) writes.push(`${request.method()} ${request.headers()['if-match']} ${request.postData()}`);
    });
    await signIn(page);

    // Someone else retags plant 7 while this user renames it.
    let dialog = await edit(page, 7);
    assert.equal((await t.call('PATCH', '/plants/7', { body: { tag: 'red' } })).statusCode, 200);
    const theirs = String((await t.call('GET', '/plants/7')).headers.etag);
    await dialog.getByLabel('Name').fill('Fern (mine)');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'changed by someone else while you edited it' }).waitFor();
    writes.length = 0;
    await dialog.getByRole('button', { name: 'Keep mine' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 7.' }).waitFor();
    // Their tag kept: only the name was sent, as a merge patch over their version.
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Fern (mine)', tag: 'red' });
    assert.deepEqual(writes, [`PATCH ${theirs} {"name":"Fern (mine)"}`]);
    await until(async () => (await rows(page)).includes('7 | Fern (mine) | red | Edit plant 7Delete plant 7'), 'the merged row');

    // This user removes the tag while someone else renames the plant: the tag goes, their name stays.
    dialog = await edit(page, 8);
    assert.equal((await t.call('PATCH', '/plants/8', { body: { name: 'English ivy' } })).statusCode, 200);
    await dialog.getByLabel('Tag', { exact: true }).fill('');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('button', { name: 'Keep mine' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 8.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/8')).json(), { id: 8, name: 'English ivy' });

    // Changed again between the comparison and Keep mine: nothing overwritten, compared again with the newest.
    dialog = await edit(page, 7);
    assert.equal((await t.call('PATCH', '/plants/7', { body: { name: 'Fern (theirs)' } })).statusCode, 200);
    await dialog.getByLabel('Tag', { exact: true }).fill('shade');
    await dialog.getByRole('button', { name: 'Save' }).click();
    // Said before it is chosen: what Keep mine saves, and that the rest stays.
    await dialog.getByText('Keep mine saves the tag you changed over the stored version; its other fields stay as they are.').waitFor();
    assert.equal((await t.call('PATCH', '/plants/7', { body: { name: 'Fern (theirs, again)' } })).statusCode, 200);
    await dialog.getByRole('button', { name: 'Keep mine' }).click();
    await dialog.getByRole('region', { name: 'Stored version' }).getByText('Fern (theirs, again)').waitFor();
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Fern (theirs, again)', tag: 'red' });
    await dialog.getByRole('button', { name: 'Keep mine' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 7.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Fern (theirs, again)', tag: 'shade' });
    assert.deepEqual(errors(), []);
  });

  it('saves over the version shown when the form could not read it (503): no conflict made up, If-Match sent', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 7, name: 'Fern', tag: 'green' },
      { id: 8, name: 'Ivy', tag: 'climber' },
    ]);
    const writes: string[] = [];
    page.on('request', (request) => {
      if (['PUT', 'PATCH'].includes(request.method()))
        writes.push(`${request.method()} ${request.headers()['if-match']} ${request.headers()['if-none-match']}`);
    });
    await signIn(page);
    // The form's read of the plant meets a 503, once per plant.
    const failed = new Set<string>();
    await page.route(/\/plants\/\d+$/, async (route) => {
      const path = new URL(route.request().url()).pathname;
      if (route.request().method() !== 'GET' || failed.has(path)) return route.fallback();
      failed.add(path);
      await route.fulfill({
        status: 503,
        contentType: 'application/json',
        headers: { 'retry-after': '1' },
        body: '{"error":503,"code":"unavailable","message":"the store is busy"}',
      });
    });
    let dialog = await edit(page, 7);
    await dialog.getByText('The service failed (HTTP 503): the store is busy.').waitFor();
    await dialog.getByLabel('Name').fill('Boston fern');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 7.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Boston fern', tag: 'green' });
    assert.equal(writes.length, 1);
    assert.match(writes[0]!, /^PUT "[^"]+" undefined$/, 'over the version read at Save, with If-Match');

    // Unread, and changed meanwhile by someone else: compared, honestly, from the version shown.
    dialog = await edit(page, 8);
    await dialog.getByText('The service failed (HTTP 503): the store is busy.').waitFor();
    assert.equal((await t.call('PATCH', '/plants/8', { body: { tag: 'shade' } })).statusCode, 200);
    await dialog.getByLabel('Name').fill('English ivy');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'changed by someone else while you edited it' }).waitFor();
    await dialog.getByRole('button', { name: 'Keep mine' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 8.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/8')).json(), { id: 8, name: 'English ivy', tag: 'shade' });
    assert.deepEqual(errors(), []);
  });
});
