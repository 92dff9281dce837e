import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { TOKEN } from '../helpers.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's sorting and address browser tests", browserSkip);

/** The aria-sort of the Id and Name column headers. */
async function ariaSort(page: Page): Promise<[string | null, string | null]> {
  return [
    await page.getByRole('columnheader', { name: 'Id' }).getAttribute('aria-sort'),
    await page.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort'),
  ];
}

/** What the plants view's controls show: Search, With tag, Sort by, Page size. */
async function controls(page: Page): Promise<string[]> {
  return [
    await page.getByRole('searchbox', { name: 'Search' }).inputValue(),
    await page.getByLabel('With tag').inputValue(),
    await page.getByLabel('Sort by').inputValue(),
    await page.getByLabel('Page size').inputValue(),
  ];
}

/** The address's fragment. */
const hashOf = (page: Page) => new URL(page.url()).hash;

/** Waits until the table shows these ids, in this order. */
const showing = (page: Page, ids: string, what = ids) => until(async () => (await shownIds(page)).join() === ids, what);

describe('the console: sorting by the headers, and the view in the address', { skip, timeout: 180_000 }, () => {
  it('sorts by a click on the Id or Name header, ascending then descending, each header telling its order by aria-sort', async () => {
    const { t, page, origin, requests, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Monstera' },
      { id: 2, name: 'Aloe' },
      { id: 3, name: 'Zebra plant' },
      { id: 4, name: 'Boston fern' },
    ]);
    await signIn(page);
    await showing(page, '1,2,3,4');
    // The default order, by id ascending, is said too.
    assert.deepEqual(await ariaSort(page), ['ascending', 'none']);
    assert.equal(await page.getByRole('columnheader', { name: 'Tag' }).getAttribute('aria-sort'), null);

    const header = (name: 'Id' | 'Name') => page.getByRole('columnheader', { name }).getByRole('button', { name, exact: true });
    await header('Name').click();
    await showing(page, '2,4,1,3', 'by name, A to Z');
    assert.deepEqual(await ariaSort(page), ['none', 'ascending']);
    assert.equal(await page.getByLabel('Sort by').inputValue(), 'name', 'Sort by shows the same order');
    await header('Name').click();
    await showing(page, '3,1,4,2', 'by name, Z to A');
    assert.deepEqual(await ariaSort(page), ['none', 'descending']);
    await header('Id').click();
    await showing(page, '1,2,3,4', 'by id, ascending');
    assert.deepEqual(await ariaSort(page), ['ascending', 'none']);
    await header('Id').click();
    await showing(page, '4,3,2,1', 'by id, descending');
    assert.deepEqual(await ariaSort(page), ['descending', 'none']);
    assert.equal(await page.getByLabel('Sort by').inputValue(), '-id');
    // Sort by sets the same order, and the headers say so.
    await page.getByLabel('Sort by').selectOption({ label: 'Name, Z to A' });
    await showing(page, '3,1,4,2');
    assert.deepEqual(await ariaSort(page), ['none', 'descending']);
    await header('Name').click();
    await showing(page, '2,4,1,3');
    assert.deepEqual(await ariaSort(page), ['none', 'ascending']);

    for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
    assert.deepEqual(errors(), []);
  });

  it('sorts by Id ascending at the first click from the default order (by id, not chosen), descending at the second', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Monstera' },
      { id: 2, name: 'Aloe' },
      { id: 3, name: 'Zebra plant' },
    ]);
    await signIn(page);
    await showing(page, '1,2,3');
    assert.ok(['', '#plants'].includes(hashOf(page)), hashOf(page));
    const id = page.getByRole('columnheader', { name: 'Id' }).getByRole('button', { name: 'Id', exact: true });
    await id.click();
    await until(async () => hashOf(page) === '#plants?sort=id', 'the order chosen, in the address');
    await showing(page, '1,2,3', 'by id, ascending');
    assert.deepEqual(await ariaSort(page), ['ascending', 'none']);
    await id.click();
    await showing(page, '3,2,1', 'by id, descending');
    assert.deepEqual(await ariaSort(page), ['descending', 'none']);
    assert.equal(hashOf(page), '#plants?sort=-id');
    // A reload keeps the chosen order, so the next click still knows it.
    await page.goto(page.url().replace(/#.*$/, '#plants?sort=id'));
    await page.reload();
    await showing(page, '1,2,3');
    await id.click();
    await showing(page, '3,2,1', 'descending: the order in the address was chosen');
    assert.deepEqual(errors(), []);
  });

  it('"Skip to content" moves the focus to the view and leaves the address, so the view, as it is', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Fern' },
      { id: 2, name: 'Ivy' },
    ]);
    await signIn(page);
    await showing(page, '1,2');
    await page.getByRole('searchbox', { name: 'Search' }).fill('ivy');
    await page.getByRole('searchbox', { name: 'Search' }).press('Enter');
    await showing(page, '2', 'the search');
    const view = hashOf(page);
    assert.match(view, /^#plants\?q=ivy/);
    await page.getByRole('link', { name: 'Skip to content' }).focus();
    await page.keyboard.press('Enter');
    const focusedId = () =>
      page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id);
    await until(async () => (await focusedId()) === 'main', 'the focus on the view');
    assert.equal(hashOf(page), view);
    await showing(page, '2', 'the search kept');
    assert.equal(await page.getByRole('searchbox', { name: 'Search' }).inputValue(), 'ivy');
    assert.deepEqual(errors(), []);
  });

  it('keeps search, tags, order and page size in the address: a reload, a link in another tab and Back all show the same view', async () => {
    const { t, page, origin, requests, errors } = await openConsole(after);
    await addPlants(t, [
      ...Array.from({ length: 14 }, (_, i) => ({ id: i + 1, name: `Fern ${String(i + 1).padStart(2, '0')}`, tag: i % 2 === 0 ? 'shade' : 'sun' })),
      { id: 100, name: 'Ivy', tag: 'shade' },
    ]);
    await signIn(page);
    await until(async () => (await shownIds(page)).length === 15, 'every plant');
    assert.deepEqual(await page.getByLabel('Page size').locator('option').allInnerTexts(), ['10', '25', '50', '100']);
    assert.equal(await page.getByLabel('Page size').inputValue(), '25');

    // A search with two tags, an order by a header, a page size: each a step in the address.
    await page.getByRole('searchbox', { name: 'Search' }).fill('fern');
    await page.getByLabel('With tag').fill('shade, sun');
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => hashOf(page) === '#plants?q=fern&tag=shade&tag=sun', 'the search in the address');
    await page.getByRole('columnheader', { name: 'Name' }).getByRole('button').click();
    await page.getByRole('columnheader', { name: 'Name' }).getByRole('button').click();
    await until(async () => hashOf(page) === '#plants?q=fern&tag=shade&tag=sun&sort=-name', 'the order in the address');
    await page.getByLabel('Page size').selectOption('10');
    await until(async () => hashOf(page) === '#plants?q=fern&tag=shade&tag=sun&sort=-name&limit=10', 'the page size in the address');
    const firstTen = Array.from({ length: 10 }, (_, i) => String(14 - i)).join();
    await showing(page, firstTen, 'ferns 14 to 5, ten a page');
    const view = ['fern', 'shade, sun', '-name', '10'];
    assert.deepEqual(await controls(page), view);

    // A reload keeps the view (and the sign-in, in this tab's sessionStorage).
    await page.reload();
    await showing(page, firstTen, 'the same view after a reload');
    assert.deepEqual(await controls(page), view);
    assert.deepEqual(await ariaSort(page), ['none', 'descending']);
    await page.getByRole('button', { name: 'Next page' }).click();
    await showing(page, '4,3,2,1', 'the next page of the view');

    // The address opened in another tab: sign in there (a tab of its own), and the same view.
    const other = await page.context().newPage();
    after(() => other.close());
    await other.goto(page.url());
    await other.getByLabel('Token').waitFor();
    await signIn(other);
    await showing(other, firstTen, 'the same view in another tab');
    assert.deepEqual(await controls(other), view);
    // Back to the first tab, shown: hidden behind the other, its animation frames (which every click waits
    // for, to find its target still) and timers were held back, a second a click.
    await page.bringToFront();

    // Back: each earlier view in turn, its controls and rows; Forward again.
    const back = async (hash: string, ids: string, shown: string[]) => {
      await page.goBack();
      await until(async () => hashOf(page) === hash, hash);
      await showing(page, ids, `${hash}: ${ids}`);
      assert.deepEqual(await controls(page), shown, hash);
    };
    const ferns = (ids: number[]) => ids.map(String).join();
    await back('#plants?q=fern&tag=shade&tag=sun&sort=-name', ferns([14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]), [
      'fern',
      'shade, sun',
      '-name',
      '25',
    ]);
    await back('#plants?q=fern&tag=shade&tag=sun&sort=name', ferns([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]), [
      'fern',
      'shade, sun',
      'name',
      '25',
    ]);
    await back('#plants?q=fern&tag=shade&tag=sun', ferns([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]), ['fern', 'shade, sun', 'id', '25']);
    await page.goBack();
    await until(async () => (await shownIds(page)).length === 15, 'every plant again');
    assert.deepEqual(await controls(page), ['', '', 'id', '25']);
    await page.goForward();
    await until(async () => hashOf(page) === '#plants?q=fern&tag=shade&tag=sun', 'Forward');
    await until(async () => (await shownIds(page)).length === 14, 'the ferns again');

    // The sections keep the plants view: Changes, then Plants, returns to it.
    await page.getByRole('link', { name: 'Changes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Changes' }).waitFor();
    await page.getByRole('link', { name: 'Plants' }).click();
    await until(async () => hashOf(page) === '#plants?q=fern&tag=shade&tag=sun', 'the plants view kept');

    for (const url of [...requests, page.url(), other.url()]) {
      assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
      assert.ok(!url.includes(TOKEN), `the token in a URL: ${url}`);
    }
    assert.deepEqual(errors(), []);
  });

  it('opens an address holding values it cannot read with the defaults, writes it back in its own words, and never fails', async () => {
    const { t, page, origin, errors } = await openConsole(after, { path: '/console#plants?q=%zz&sort=sideways&limit=7&tag=++&cursor=x' });
    await addPlants(t, [{ id: 1, name: 'a %zz plant' }]);
    await signIn(page);
    await showing(page, '1');
    assert.deepEqual(await controls(page), ['%zz', '', 'id', '25']);
    assert.equal(hashOf(page), '#plants?q=%25zz');
    for (const hash of ['#plants?limit=1000&sort=', '#nowhere?q=a', '#plants?q=%E0%A4%A&tag=%', '#plants?limit=-1&limit=50']) {
      await page.goto(`${origin}/console${hash}`);
      await page.getByRole('heading', { level: 1, name: 'Plants' }).waitFor();
      await page
        .getByRole('status')
        .filter({ hasText: /^Page 1/ })
        .waitFor();
      // A new fragment is no new page: the heading and the status above may be the last address's, so the
      // address is waited for, written back in the console's words (each of these is not).
      await until(() => hashOf(page) !== hash, `${hash} written back in the console's words`);
    }
    assert.equal(hashOf(page), '#plants');
    assert.deepEqual(await controls(page), ['', '', 'id', '25']);
    assert.deepEqual(errors(), []);
  });

  it('never takes back a step a person took while the view before was still settling its address', async () => {
    const { page, errors } = await openConsole(after);
    await signIn(page);
    await page.getByRole('heading', { level: 1, name: 'Plants' }).waitFor();
    // A link followed in the frame after another view rendered (a quick Enter on the next section): the
    // address has changed, and its hashchange is still to come when that render's effects run. Here the
    // address is changed in the microtask after the render (pushState: no hashchange yet), the effects
    // given time to run, and only then the hashchange sent. The console once wrote the view before back
    // over the new address, and the step was lost (1 run in 12 of the keyboard test in offline.process).
    const settled = await page.evaluate(async () => {
      const w = globalThis as unknown as {
        location: { hash: string };
        history: { state: unknown; pushState(state: unknown, title: string, url: string): void };
        addEventListener(type: string, listener: () => void, options: { once: boolean }): void;
        dispatchEvent(event: unknown): void;
        HashChangeEvent: new (type: string) => unknown;
        requestAnimationFrame(callback: () => void): void;
      };
      await new Promise<void>((resolve) => {
        // After the console's own listener, whose render runs in the microtask it queued first.
        w.addEventListener('hashchange', () => queueMicrotask(() => (w.history.pushState(w.history.state, '', '#tokens'), resolve())), {
          once: true,
        });
        w.location.hash = '#changes';
      });
      await new Promise<void>((resolve) => w.requestAnimationFrame(() => setTimeout(resolve, 200)));
      const hash = w.location.hash;
      w.dispatchEvent(new w.HashChangeEvent('hashchange'));
      return hash;
    });
    assert.equal(settled, '#tokens', 'the new address, kept');
    await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
    assert.equal(hashOf(page), '#tokens');
    assert.deepEqual(errors(), []);
  });
});
