import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page, Route } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's plant error browser tests", browserSkip);

/** The pager's status: "Page 1 · 3 plants found", "Loading…", or nothing. */
const pagerStatus = (page: Page) => page.getByRole('navigation', { name: 'Pages' }).getByRole('status').innerText();

const search = async (page: Page, text: string) => {
  await page.getByRole('searchbox', { name: 'Search' }).fill(text);
  await page.getByRole('button', { name: 'Search' }).click();
};

/** GET /plants, answered by no service at all. */
const plantsList = (url: URL) => url.pathname === '/plants';
const refuseConnection = (route: Route) => route.abort('connectionrefused');

describe('the console: searches the service refuses or cannot answer', { skip, timeout: 180_000 }, () => {
  it('shows the error and none of the previous search plants, count or buttons', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Boston fern' },
      { id: 2, name: 'Maidenhair fern' },
      { id: 3, name: 'Rose' },
    ]);
    await signIn(page);
    await search(page, 'fern');
    await until(async () => (await shownIds(page)).join() === '1,2', 'the ferns');
    assert.equal(await pagerStatus(page), 'Page 1 · 2 plants found');

    // Refused (400): a search over 100 characters.
    await search(page, 'ivy '.repeat(30).trim());
    await page.getByRole('alert').filter({ hasText: 'Refused (HTTP 400): querystring.q must be at most 100 characters long.' }).waitFor();
    assert.equal(await page.getByRole('table').count(), 0, "no table: the fern search's rows are gone");
    assert.equal(await pagerStatus(page), '');
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);

    await search(page, 'fern');
    await until(async () => (await shownIds(page)).join() === '1,2', 'the ferns again');
    assert.equal(await page.getByRole('alert').count(), 0, 'the error gone with the answer');

    // No answer at all (the service down): the same.
    await page.route(plantsList, refuseConnection);
    await search(page, 'rose');
    await page.getByRole('alert').filter({ hasText: 'The service did not answer' }).waitFor();
    assert.equal(await page.getByRole('table').count(), 0);
    assert.equal(await pagerStatus(page), '');

    // A reload of the view shown that fails keeps its page: the rows are that view's, the error says the reload failed.
    await page.unroute(plantsList, refuseConnection);
    await search(page, 'fern');
    await until(async () => (await shownIds(page)).join() === '1,2', 'the ferns once more');
    await page.route(plantsList, refuseConnection);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('alert').filter({ hasText: 'The service did not answer' }).waitFor();
    assert.deepEqual(await shownIds(page), ['1', '2']);
    assert.equal(await pagerStatus(page), 'Page 1 · 2 plants found');
    assert.deepEqual(errors(), []);
  });
});
