import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { TOKEN } from '../helpers.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's keyboard focus browser tests", browserSkip);

/**
 * Where the keyboard's focus goes when what had it goes away or waits: after signing in and out, a delete,
 * Delete selected, an edit conflict; on Next page while its page loads, on Sign in refused. It fell to the
 * page's start (<body>) each time, and a keyboard user started again from "Skip to content".
 */

/** The focused element: `tag#id`, or `tag: text` (its first 60 characters). */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const { document } = globalThis as unknown as { document: { activeElement: { tagName: string; id: string; textContent: string } | null } };
    const active = document.activeElement!;
    const tag = active.tagName.toLowerCase();
    return active.id !== '' ? `${tag}#${active.id}` : `${tag}: ${active.textContent.trim().slice(0, 60).trim()}`;
  });
}

/** The pager's status: "Page 2 · 25 plants found". */
const pageStatus = (page: Page) => page.getByRole('navigation', { name: 'Pages' }).getByRole('status');

describe('the console: the keyboard focus', { skip, timeout: 180_000 }, () => {
  it('signing in puts it on the view, signing out on Token; a refused Sign in keeps it', async () => {
    const { page, errors } = await openConsole(after);
    await until(async () => (await focused(page)).startsWith('input#'), 'the focus in Token as the form shows');
    await page.keyboard.type('ps_not-a-token-of-this-service');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'button: Sign in');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor();
    assert.equal(await focused(page), 'button: Sign in', 'kept while the request ran and after');

    await page.getByLabel('Token').fill(TOKEN);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await focused(page), 'main#main');

    await page.getByRole('button', { name: 'Sign out' }).focus();
    await page.keyboard.press('Enter');
    await page.getByLabel('Token').waitFor();
    await until(async () => (await focused(page)).startsWith('input#'), 'the focus in Token after signing out');
    assert.deepEqual(errors(), []);
  });

  it('Next page and Previous page keep it, pressed again and again', async () => {
    const { t, page, errors } = await openConsole(after, { path: '/console#plants?sort=id&limit=10' });
    await addPlants(
      t,
      Array.from({ length: 25 }, (_, i) => ({ id: i + 1, name: `Plant ${i + 1}` })),
    );
    await signIn(page);
    await until(async () => (await shownIds(page)).length === 10, 'the first page');
    await page.getByRole('button', { name: 'Next page' }).focus();
    for (const [n, first] of [
      [2, '11'],
      [3, '21'],
    ] as const) {
      await page.keyboard.press('Enter');
      await until(async () => (await pageStatus(page).innerText()).startsWith(`Page ${n}`) && (await shownIds(page))[0] === first, `page ${n}`);
      assert.equal(await focused(page), 'button: Next page', `on page ${n}`);
    }
    await page.getByRole('button', { name: 'Previous page' }).focus();
    for (const [n, first] of [
      [2, '11'],
      [1, '1'],
    ] as const) {
      await page.keyboard.press('Enter');
      await until(async () => (await pageStatus(page).innerText()).startsWith(`Page ${n}`) && (await shownIds(page))[0] === first, `page ${n}`);
      assert.equal(await focused(page), 'button: Previous page', `back on page ${n}`);
    }
    // On the first page, Previous page does nothing (and says it is unavailable).
    await page.keyboard.press('Enter');
    assert.equal(await page.getByRole('button', { name: 'Previous page' }).isDisabled(), true);
    assert.equal((await pageStatus(page).innerText()).startsWith('Page 1'), true);
    assert.deepEqual(errors(), []);
  });

  it('a confirmation opens on Cancel; after Delete and Delete selected the focus is on what was done', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'One' },
      { id: 2, name: 'Two' },
      { id: 3, name: 'Three' },
    ]);
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1,2,3', 'the plants');

    await page.getByRole('button', { name: 'Delete plant 2', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Delete plant 2?' }).waitFor();
    assert.equal(await focused(page), 'button: Cancel', 'Enter, Enter deletes nothing');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(page), 'button: Delete');
    await page.keyboard.press('Enter');
    await until(async () => (await shownIds(page)).join() === '1,3', 'plant 2 deleted');
    assert.equal(await focused(page), 'p: Deleted plant 2.');

    await page.getByRole('checkbox', { name: 'Select Three' }).check();
    await page.getByRole('button', { name: 'Delete selected' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await until(async () => (await focused(page)) === 'button: Cancel', 'the focus on Cancel');
    await dialog.getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    await until(async () => (await shownIds(page)).join() === '1', 'plant 3 deleted');
    assert.equal(await focused(page), 'p: Deleted 1 plant.');
    assert.deepEqual(errors(), []);
  });

  it('an edit conflict puts it on what happened, in the dialog', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 7, name: 'Fern' }]);
    await signIn(page);
    await page.getByRole('button', { name: 'Edit plant 7', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit plant 7' });
    const save = dialog.getByRole('button', { name: 'Save' });
    await until(() => save.isEnabled(), 'the stored plant read into the form');
    assert.equal((await t.call('PATCH', '/plants/7', { body: { name: 'Fern (theirs)' } })).statusCode, 200);
    await dialog.getByLabel('Name').fill('Fern (mine)');
    await save.focus();
    await page.keyboard.press('Enter');
    await dialog.getByRole('button', { name: 'Keep mine' }).waitFor();
    assert.equal(await focused(page), 'p: This plant was changed by someone else while you edited it.');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'button: Keep mine', 'Tab goes on to its choices');
    assert.deepEqual(errors(), []);
  });
});
