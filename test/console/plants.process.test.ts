import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, rows, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's plant browser tests", browserSkip);

/** 2^63 - 1, the largest id: a JS number cannot hold it. */
const MAX_ID = '9223372036854775807';

describe('the console: plants', { skip, timeout: 180_000 }, () => {
  it('finds plants by name (Search) and tag, sorts them, and pages by the Link headers', async () => {
    const { t, page, answers, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Boston Fern', tag: 'fern' },
      { id: 2, name: 'Monstera', tag: 'tropical' },
      { id: 3, name: 'Maidenhair fern', tag: 'fern' },
      { id: 4, name: 'Aloe', tag: 'succulent' },
      { id: 5, name: 'FERN-leaf lavender' },
    ]);
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1,2,3,4,5', 'the five plants');
    assert.deepEqual(await rows(page), [
      '1 | Boston Fern | fern | Edit plant 1Delete plant 1',
      '2 | Monstera | tropical | Edit plant 2Delete plant 2',
      '3 | Maidenhair fern | fern | Edit plant 3Delete plant 3',
      '4 | Aloe | succulent | Edit plant 4Delete plant 4',
      '5 | FERN-leaf lavender |  | Edit plant 5Delete plant 5',
    ]);
    await page.getByRole('status').filter({ hasText: 'Page 1 · 5 plants found' }).waitFor();

    // Search: the API's q, any case.
    await page.getByRole('searchbox', { name: 'Search' }).fill('fern');
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => (await shownIds(page)).join() === '1,3,5', 'the ferns');
    assert.ok(answers.includes('200 GET /plants'));
    // With a tag too; then by tag alone, two of them.
    await page.getByLabel('With tag').fill('fern');
    await page.keyboard.press('Enter');
    await until(async () => (await shownIds(page)).join() === '1,3', 'the ferns tagged fern');
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await page.getByLabel('With tag').fill('succulent, tropical');
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => (await shownIds(page)).join() === '2,4', 'the succulent and the tropical plant');
    await page.getByLabel('Sort by').selectOption({ label: 'Name, A to Z' });
    await until(async () => (await shownIds(page)).join() === '4,2', 'by name');
    await page.getByLabel('Sort by').selectOption({ label: 'Id, descending' });
    await until(async () => (await shownIds(page)).join() === '4,2', 'by id, descending');
    await page.getByLabel('With tag').fill('none-such');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No plants found.').waitFor();

    // Pages: 60 plants, 25 a page, each next page from the Link header's cursor, and back.
    await addPlants(
      t,
      Array.from({ length: 55 }, (_, i) => ({ id: 100 + i, name: `Seedling ${100 + i}` })),
    );
    await page.getByLabel('With tag').fill('');
    await page.getByLabel('Sort by').selectOption({ label: 'Id, ascending' });
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => (await shownIds(page)).length === 25 && (await shownIds(page))[0] === '1', 'the first page');
    assert.equal(await page.getByRole('button', { name: 'Previous page' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Next page' }).click();
    await until(async () => (await shownIds(page))[0] === '120', 'the second page');
    assert.equal((await shownIds(page)).at(-1), '144');
    await page.getByRole('button', { name: 'Next page' }).click();
    await until(async () => (await shownIds(page)).join() === Array.from({ length: 10 }, (_, i) => 145 + i).join(), 'the last page');
    await page.getByRole('status').filter({ hasText: 'Page 3 · 60 plants found' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await until(async () => (await shownIds(page))[0] === '120', 'back to the second page');
    assert.ok(answers.some((answer) => answer === '200 GET /plants'));
    assert.deepEqual(errors(), []);
  });

  it('creates a plant with "New plant" (Id, Name, Tag, Save), exact over the whole int64 range, and tells what is wrong in words', async () => {
    const { t, page, errors } = await openConsole(after);
    await signIn(page);
    const create = async (id: string, name: string, tag: string) => {
      await page.getByRole('button', { name: 'New plant' }).click();
      const dialog = page.getByRole('dialog', { name: 'New plant' });
      await dialog.getByLabel('Id').fill(id);
      await dialog.getByLabel('Name').fill(name);
      await dialog.getByLabel('Tag', { exact: true }).fill(tag);
      await dialog.getByRole('button', { name: 'Save' }).click();
      return dialog;
    };

    await create(MAX_ID, 'Biggest leaf', 'huge');
    await page
      .getByRole('status')
      .filter({ hasText: `Created plant ${MAX_ID}.` })
      .waitFor();
    await until(async () => (await shownIds(page)).includes(MAX_ID), 'the new plant in the table');
    const stored = await t.call('GET', `/plants/${MAX_ID}`);
    assert.equal(stored.payload, `{"id":${MAX_ID},"name":"Biggest leaf","tag":"huge"}`);

    // An id in use: refused (If-None-Match: *), the plant there unchanged.
    let dialog = await create(MAX_ID, 'Impostor', '');
    await dialog
      .getByRole('alert')
      .filter({ hasText: `A plant with id ${MAX_ID} exists already` })
      .waitFor();
    assert.equal((await t.call('GET', `/plants/${MAX_ID}`)).json().name, 'Biggest leaf');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // Not a whole number, or beyond int64: the service's own words.
    dialog = await create('12a', 'Typo', '');
    await dialog.getByRole('alert').filter({ hasText: 'Refused (HTTP 400): body.id must be an integer.' }).waitFor();
    await dialog.getByLabel('Id').fill('9223372036854775808');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog
      .getByRole('alert')
      .filter({ hasText: 'Refused (HTTP 400): body.id must be an integer from -9223372036854775808 to 9223372036854775807.' })
      .waitFor();
    // Escape closes the dialog: nothing was made.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await t.call('GET', '/plants')).json().length, 1);
    assert.deepEqual(errors(), []);
  });

  it('edits with If-Match: a plant changed meanwhile is shown side by side, to keep mine or take the stored one', async () => {
    const { t, page, requests, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 7, name: 'Fern', tag: 'green' },
      { id: 8, name: 'Ivy', tag: 'green' },
    ]);
    let ifMatch: string | undefined;
    page.on('request', (request) => {
      if (request.method() === 'PUT') ifMatch = request.headers()['if-match'];
    });
    await signIn(page);
    const edit = async (id: number) => {
      await page.getByRole('button', { name: `Edit plant ${id}`, exact: true }).click();
      const dialog = page.getByRole('dialog', { name: `Edit plant ${id}` });
      // The form opens with the row's values and reads the stored plant (its ETag) before Save is enabled:
      // a write from another client must come after that read to be a conflict, not the version read.
      await until(() => dialog.getByRole('button', { name: 'Save' }).isEnabled(), 'the stored plant read into the form');
      assert.equal(await dialog.getByLabel('Id').getAttribute('readonly'), '');
      return dialog;
    };

    // No conflict: saved with the version read.
    const version = String((await t.call('GET', '/plants/8')).headers.etag);
    let dialog = await edit(8);
    await dialog.getByLabel('Name').fill('English ivy');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 8.' }).waitFor();
    assert.equal(ifMatch, version);

    // Another client renames plant 7 while the form is open: Save shows both versions.
    dialog = await edit(7);
    assert.equal((await t.call('PATCH', '/plants/7', { body: { name: 'Fern (theirs)' } })).statusCode, 200);
    await dialog.getByLabel('Name').fill('Fern (mine)');
    await dialog.getByLabel('Tag', { exact: true }).fill('shade');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'changed by someone else while you edited it' }).waitFor();
    const mine = dialog.getByRole('region', { name: 'Your version' });
    const theirs = dialog.getByRole('region', { name: 'Stored version' });
    const shown = async (version: typeof mine) => (await version.locator('dd').allInnerTexts()).join(' / ');
    // Each difference said in words (bold and underline alone reached no screen reader), and by whom.
    assert.equal(await shown(mine), 'Fern (mine) (differs: changed by you) / shade (differs: changed by you)');
    assert.equal(await shown(theirs), 'Fern (theirs) (differs: changed by someone else) / green (differs)');
    assert.equal((await t.call('GET', '/plants/7')).json().name, 'Fern (theirs)', 'nothing overwritten yet');
    await dialog.getByRole('button', { name: 'Keep mine' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 7.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Fern (mine)', tag: 'shade' });
    await until(async () => (await rows(page)).includes('7 | Fern (mine) | shade | Edit plant 7Delete plant 7'), 'the row updated');

    // Again, and this time take the stored one: nothing is sent.
    dialog = await edit(7);
    assert.equal((await t.call('PUT', '/plants/7', { body: { name: 'Fern, replaced' } })).statusCode, 200);
    await dialog.getByLabel('Name').fill('Fern (mine, again)');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('button', { name: 'Take stored' }).click();
    await page.getByRole('status').filter({ hasText: 'Kept the stored version of plant 7.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Fern, replaced' });
    await until(async () => (await rows(page)).some((row) => row.startsWith('7 | Fern, replaced |')), 'the stored version shown');

    // Deleted meanwhile: said so; keeping mine creates it again.
    dialog = await edit(8);
    assert.equal((await t.call('DELETE', '/plants/8')).statusCode, 204);
    await dialog.getByLabel('Name').fill('Ivy, back');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'This plant was deleted while you edited it.' }).waitFor();
    await dialog.getByRole('button', { name: 'Keep mine' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved plant 8.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/8')).json(), { id: 8, name: 'Ivy, back', tag: 'green' });
    for (const url of requests) assert.equal(new URL(url).search.includes('token'), false, url);
    assert.deepEqual(errors(), []);
  });

  it('deletes a plant after asking, naming it', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Keep me' },
      { id: 2, name: 'Delete me', tag: 'old' },
    ]);
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1,2', 'both plants');
    await page.getByRole('button', { name: 'Delete plant 2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete plant 2?' });
    assert.equal(await dialog.getByRole('paragraph').first().innerText(), 'Delete me (old) will be deleted. This cannot be undone.');
    // Cancel first: nothing happens.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await t.call('GET', '/plants/2')).statusCode, 200);
    await page.getByRole('button', { name: 'Delete plant 2' }).click();
    await page.getByRole('dialog', { name: 'Delete plant 2?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted plant 2.' }).waitFor();
    await until(async () => (await shownIds(page)).join() === '1', 'the plant gone from the table');
    assert.equal((await t.call('GET', '/plants/2')).statusCode, 404);
    assert.deepEqual(errors(), []);
  });

  it('deletes only the version the dialog named (If-Match): a plant changed meanwhile is kept, said so, and named as it is now', async () => {
    const { t, page, answers, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Old cutting', tag: 'compost' },
      { id: 2, name: 'Seedling' },
    ]);
    const deletes: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (request.method() === 'DELETE') deletes.push(request.headers()['if-match']);
    });
    // Without events:read the table is not refreshed by the feed: its rows can be older than the plants.
    await signIn(page, await t.tokenWith('plants:read', 'plants:write'));
    await until(async () => (await shownIds(page)).join() === '1,2', 'the plants');

    // Changed after the dialog read its version: the DELETE goes with that version, and is refused.
    const before = String((await t.call('GET', '/plants/1')).headers.etag);
    await page.getByRole('button', { name: 'Delete plant 1' }).click();
    let dialog = page.getByRole('dialog', { name: 'Delete plant 1?' });
    await until(async () => answers.includes('200 GET /plants/1'), 'the version read as the dialog opened');
    assert.equal((await t.call('PUT', '/plants/1', { body: { name: 'Prize-winning bonsai', tag: 'keep' } })).statusCode, 200);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    const changed =
      'Plant 1 was changed by someone else since it was shown, so it was left as it is: it was Old cutting (compost), ' +
      'it is now Prize-winning bonsai (keep). Delete deletes it as it is now.';
    await dialog.getByRole('alert').filter({ hasText: changed }).waitFor();
    assert.deepEqual(deletes, [before]);
    assert.deepEqual((await t.call('GET', '/plants/1')).json(), { id: 1, name: 'Prize-winning bonsai', tag: 'keep' });
    assert.equal(await dialog.getByRole('paragraph').first().innerText(), 'Prize-winning bonsai (keep) will be deleted. This cannot be undone.');
    // Asked again, naming the plant as it is now: Delete deletes that version.
    const now = String((await t.call('GET', '/plants/1')).headers.etag);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted plant 1.' }).waitFor();
    assert.deepEqual(deletes, [before, now]);
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404);

    // Changed before the dialog opened, the row not showing it yet: no DELETE sent at all.
    assert.equal((await t.call('PATCH', '/plants/2', { body: { tag: 'sold' } })).statusCode, 200);
    await page.getByRole('button', { name: 'Delete plant 2' }).click();
    dialog = page.getByRole('dialog', { name: 'Delete plant 2?' });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByRole('alert').filter({ hasText: 'it was Seedling, it is now Seedling (sold).' }).waitFor();
    assert.equal(deletes.length, 2);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual((await t.call('GET', '/plants/2')).json(), { id: 2, name: 'Seedling', tag: 'sold' });
    assert.deepEqual(errors(), []);
  });

  it('edits only what was changed: an empty tag, or one of spaces, stays as it was when only the name is', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Empty tag', tag: '' },
      { id: 2, name: 'Spaces tag', tag: '  ' },
      { id: 3, name: 'No tag' },
    ]);
    await signIn(page);
    for (const [id, tag] of [
      [1, ''],
      [2, '  '],
      [3, undefined],
    ] as const) {
      await page.getByRole('button', { name: `Edit plant ${id}`, exact: true }).click();
      const dialog = page.getByRole('dialog', { name: `Edit plant ${id}` });
      await until(() => dialog.getByRole('button', { name: 'Save' }).isEnabled(), 'the stored plant read into the form');
      const name = `${await dialog.getByLabel('Name').inputValue()} renamed`;
      await dialog.getByLabel('Name').fill(name);
      await dialog.getByRole('button', { name: 'Save' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Saved plant ${id}.` })
        .waitFor();
      assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name, ...(tag !== undefined && { tag }) });
    }
    assert.deepEqual(errors(), []);
  });
});
