import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { createToken } from '../../src/auth/tokens.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { browserSkip } from '../chromium.js';
import { tempDir, testApp } from '../helpers.js';
import { addPlants, openConsole, rows, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's paging browser tests", browserSkip);

/**
 * Paging where the answers come short or late. A search of one or two letters on SQLite examines at most a
 * window of plants a page (100,000; a few here), so a page can come back short or empty with a Link to go on
 * (test/store/sqlite/scan-window.test.ts): the console fills its table from such pages, reading at most 10 a
 * load, and says when those found nothing yet. And a page asked for twice before it came is shown once.
 */

/** The app on a SQLite store whose short searches examine `window` plants a page, holding `count` plants; `holding` have "zq" in their names. */
async function consoleOver(window: number, count: number, holding: number[], view = '') {
  const store = SqliteStore.open(`file:${join(tempDir(after), 'plants.db')}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000, scanWindow: window });
  const t = await testApp(after, { store });
  // Names in id order, so that the name order is the id order too.
  await addPlants(
    t,
    Array.from({ length: count }, (_, i) => ({ id: i + 1, name: `Plant ${String(i + 1).padStart(3, '0')}${holding.includes(i + 1) ? ' zq' : ''}` })),
  );
  const opened = await openConsole(after, { t, path: `/console${view}` });
  await signIn(opened.page);
  const limit = Number(new URLSearchParams(view.split('?')[1]).get('limit') ?? 25);
  await until(async () => (await shownIds(opened.page)).length === limit, 'the first page of every plant');
  return opened;
}

/** The pager's status: "Page 2", with the count when there is one. */
const pageStatus = (page: Page) => page.getByRole('navigation', { name: 'Pages' }).getByRole('status');

/**
 * Holds back the requests whose URL matches `urls` until `release` is called; after it they pass at once
 * (the route stays: unrouting would cut the requests still held).
 */
async function holdAnswers(page: Page, urls: RegExp): Promise<{ release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route(urls, async (route) => {
    await released;
    await route.continue();
  });
  return { release };
}

/**
 * Clicks Next page, then again while the page asked for is still out (its answer held back): the second
 * click must not go past it, on the next link of the page still shown. Returns once it has come.
 */
async function nextPageTwice(page: Page, pages: RegExp, answered: () => number): Promise<void> {
  const before = answered();
  const held = await holdAnswers(page, pages);
  const next = page.getByRole('button', { name: 'Next page' });
  await next.click();
  await until(async () => (await pageStatus(page).innerText()).startsWith('Page 2'), 'the second page asked for');
  // Forced: the button is (rightly) disabled now, and a click on a disabled button does nothing.
  await next.click({ force: true });
  held.release();
  await until(async () => answered() > before && !(await next.isDisabled()), 'the second page come');
}

describe('the console: paging', { skip, timeout: 180_000 }, () => {
  it('fills the table from short and empty pages, in order, each page asking only for what is left, the count asked once', async () => {
    // By name, 10 a page, from the address: no load of another view is still out when the search starts.
    const { page, requests, errors } = await consoleOver(8, 60, [4, 12, 13, 27, 38, 52, 53, 54], '#plants?sort=name&limit=10');
    assert.equal(await page.getByLabel('Sort by').inputValue(), 'name');
    const before = requests.length;
    await page.getByRole('searchbox', { name: 'Search' }).fill('zq');
    await page.getByRole('button', { name: 'Search' }).click();
    // 8 windows of 8 plants, most of them short or empty pages: the 8 that hold "zq" on one page, the list's end reached.
    await until(async () => (await shownIds(page)).join() === '4,12,13,27,38,52,53,54', 'the plants that hold "zq", on one page');
    // A q this short is not counted (its count would read every name): the status names the page alone.
    assert.equal(await pageStatus(page).innerText(), 'Page 1');
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true, 'the list ended');
    const asked = requests.slice(before).filter((url) => new URL(url).pathname === '/plants');
    assert.ok(asked.length >= 2 && asked.length <= 10, `${asked.length} pages read`);
    // Each page after the first goes on from the one before and asks for what the table still lacks.
    const limits = asked.map((url) => Number(new URL(url).searchParams.get('limit')));
    assert.equal(limits[0], 10);
    assert.ok(
      limits.every((limit, i) => i === 0 || (limit >= 1 && limit <= limits[i - 1]!)),
      `limits ${limits.join()}`,
    );
    assert.ok(
      asked.slice(1).every((url) => new URL(url).searchParams.has('cursor')),
      'every page after the first goes on by its cursor',
    );
    assert.deepEqual(errors(), []);
  });

  it('stops after 10 pages a load: none found yet is said as such, and Next page searches on to the plants found', async () => {
    const { page, requests, answers, errors } = await consoleOver(2, 59, [55, 58]);
    const before = requests.length;
    const answeredBefore = answers.length;
    // The pages of plants the browser was answered since the search.
    const answered = () => Promise.resolve(answers.slice(answeredBefore).filter((answer) => answer === '200 GET /plants').length);
    await page.getByRole('searchbox', { name: 'Search' }).fill('zq');
    await page.getByRole('button', { name: 'Search' }).click();
    // 10 pages of 2 examine plants 1 to 20: nothing yet.
    await page.getByText('No plants found yet: a short search looks through the plants a part at a time. Next page searches on.').waitFor();
    assert.equal(requests.slice(before).filter((url) => new URL(url).pathname === '/plants').length, 10, 'at most 10 pages a load');
    assert.equal(await page.getByText('No plants found.', { exact: true }).count(), 0, 'never "No plants found." while more may follow');
    // Next page is offered once the page asked for has come, never the next of a page still shown meanwhile.
    const next = page.getByRole('button', { name: 'Next page' });
    await next.click();
    assert.equal(await pageStatus(page).innerText(), 'Page 2');
    await until(async () => (await answered()) === 20 && !(await next.isDisabled()), 'the second page read, 10 pages more');
    await page.getByText('No plants found yet', { exact: false }).waitFor();
    await next.click();
    await until(async () => (await shownIds(page)).join() === '55,58', 'the two plants, on the third page');
    await until(async () => (await answered()) === 30, 'the third page read');
    assert.equal(await next.isDisabled(), true, 'the list ended');
    // Back: the page before, read again, is empty again.
    await page.getByRole('button', { name: 'Previous page' }).click();
    await until(async () => (await answered()) === 40 && !(await next.isDisabled()), 'the second page read again');
    assert.equal(await pageStatus(page).innerText(), 'Page 2');
    await page.getByText('No plants found yet', { exact: false }).waitFor();
    assert.deepEqual(errors(), []);
  });

  it('adds a page of a list once when More is clicked twice before it came (webhook endpoints, 100 a page)', async () => {
    const t = await testApp(after, { config: { webhookAllowPrivateNetworks: true } });
    for (let i = 1; i <= 101; i++) {
      const res = await t.call('POST', '/webhooks', { body: { url: `http://127.0.0.1:9/hook/${i}`, events: ['plant.created'] } });
      assert.equal(res.statusCode, 201, res.payload);
    }
    const { page, answers, errors } = await openConsole(after, { t });
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const cards = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: /^http:\/\/127\.0\.0\.1:9\/hook\// }) });
    await until(async () => (await cards.count()) === 100, 'the first 100 endpoints');
    const before = answers.filter((answer) => answer === '200 GET /webhooks').length;
    // The next page held back, so that the second click comes while the first is still out.
    const held = await holdAnswers(page, /\/webhooks\?.*cursor=/);
    await page.getByRole('button', { name: 'More endpoints' }).dblclick();
    held.release();
    await until(async () => answers.filter((answer) => answer === '200 GET /webhooks').length === before + 2, 'both clicks answered');
    await until(async () => (await page.getByRole('button', { name: 'More endpoints' }).count()) === 0, 'the list ended');
    assert.equal(await cards.count(), 101, 'the last endpoint once');
    // Refresh reads as many as are shown, in one request: the list stays whole.
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await until(async () => answers.filter((answer) => answer === '200 GET /webhooks').length === before + 3, 'the refresh answered');
    assert.equal(await cards.count(), 101, 'all 101 after the refresh');
    assert.equal(await page.getByRole('button', { name: 'More endpoints' }).count(), 0);
    assert.deepEqual(errors(), []);
  });

  it('goes one page on when Next page is clicked again while the page asked for is still out: plants and tokens', async () => {
    const { t, page, answers, errors } = await consoleOver(1000, 60, []);
    const count = (what: string) => () => answers.filter((answer) => answer === what).length;
    await nextPageTwice(page, /\/plants\?.*cursor=/, count('200 GET /plants'));
    assert.equal(await pageStatus(page).innerText(), 'Page 2 · 60 plants found');
    assert.deepEqual(
      await shownIds(page),
      Array.from({ length: 25 }, (_, i) => String(26 + i)),
    );

    for (let i = 1; i <= 55; i++) await createToken(t.store.tokens, `token ${String(i).padStart(2, '0')}`, ['plants:read']);
    const listed = (await t.call('GET', '/tokens?limit=100')).json<Array<{ name: string }>>().map((token) => token.name);
    await page.getByRole('link', { name: 'Tokens' }).click();
    await until(async () => (await rows(page)).length === 25, 'a page of 25 tokens');
    await nextPageTwice(page, /\/tokens\?.*cursor=/, count('200 GET /tokens'));
    assert.equal(await pageStatus(page).innerText(), 'Page 2');
    assert.deepEqual(
      (await rows(page)).map((row) => row.split(' | ')[1]),
      listed.slice(25, 50),
    );
    assert.deepEqual(errors(), []);
  });

  it('keeps the older deliveries a person has shown when the list refreshes itself (every 5 s), by one request for as many', async () => {
    const t = await testApp(after, { config: { webhookAllowPrivateNetworks: true } });
    const url = 'http://127.0.0.1:9/deliveries';
    const made = await t.call('POST', '/webhooks', { body: { url, events: ['plant.created'] } });
    assert.equal(made.statusCode, 201, made.payload);
    const { id } = made.json<{ id: string }>();
    // 60 messages, none sent (no dispatcher runs here): 50 a page, 10 older.
    await addPlants(
      t,
      Array.from({ length: 60 }, (_, i) => ({ id: i + 1, name: `Plant ${i + 1}` })),
    );
    const { page, requests, answers, errors } = await openConsole(after, { t });
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    // The page's timers on a clock the test moves on (time still flows as it does): the refresh timer, set as
    // the deliveries open, is then run at once, rather than waited for 5 s.
    await page.clock.install();
    await page.getByRole('button', { name: `Deliveries of ${url}` }).click();
    const deliveries = page.getByRole('region', { name: `Deliveries of ${url}` });
    const shown = async () => (await rows(page, deliveries.getByRole('table'))).length;
    await until(async () => (await shown()) === 50, 'the newest 50');
    await deliveries.getByRole('button', { name: 'Older deliveries' }).click();
    await until(async () => (await shown()) === 60, 'all 60');
    assert.equal(await deliveries.getByRole('button', { name: 'Older deliveries' }).count(), 0);
    const listed = () => answers.filter((answer) => answer === `200 GET /webhooks/${id}/deliveries`).length;
    const before = listed();
    await page.clock.fastForward(5000);
    await until(() => listed() > before, 'a refresh, within its 5 s');
    assert.equal(await shown(), 60, 'still all 60 after the refresh');
    const refreshes = requests.filter((request) => request.includes(`/webhooks/${id}/deliveries`) && !request.includes('cursor='));
    assert.equal(new URL(refreshes.at(-1)!).searchParams.get('limit'), '60', 'the refresh asks for as many as are shown');
    // Refresh deliveries, the button, does the same.
    await deliveries.getByRole('button', { name: 'Refresh deliveries' }).click();
    await until(() => listed() > before + 1, 'the refresh asked for');
    assert.equal(await shown(), 60);
    assert.deepEqual(errors(), []);
  });
});
