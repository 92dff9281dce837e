import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's browser tests of unsaved changes", browserSkip);

/**
 * A form holding what was typed and not saved (a new plant, an edit, an endpoint, a token) asks before the
 * page reloads, closes or leaves (the browser's beforeunload question), and before Back or an address
 * leaves its section (the console's own question). With nothing unsaved, nothing asks, and no beforeunload
 * listener is on the window (one keeps a page out of some browsers' back/forward cache).
 */

/** Every dialog the browser opens on the page, by type ("beforeunload"), each accepted (the page goes on). */
function dialogsOf(page: Page): string[] {
  const seen: string[] = [];
  page.on('dialog', (dialog) => {
    seen.push(dialog.type());
    void dialog.accept();
  });
  return seen;
}

/** The beforeunload listeners on the page's window, as the browser's debugger lists them. */
async function beforeUnloadListeners(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { result } = await cdp.send('Runtime.evaluate', { expression: 'window' });
    const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
    return listeners.filter((listener) => listener.type === 'beforeunload').length;
  } finally {
    await cdp.detach();
  }
}

/** Waits until the page has this many beforeunload listeners (one is added in the render after a keystroke). */
const listening = (page: Page, count: number, what: string) => until(async () => (await beforeUnloadListeners(page)) === count, what);

/** Reloads the page (any question accepted) and waits for the console signed in again (the tab's token). */
async function reload(page: Page): Promise<void> {
  await page.reload();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

describe('the console: unsaved changes', { skip, timeout: 180_000 }, () => {
  it('asks before a reload drops a new plant typed, and not with nothing typed, once emptied again, or once saved', async () => {
    const { page, errors } = await openConsole(after);
    const dialogs = dialogsOf(page);
    await signIn(page);
    assert.equal(await beforeUnloadListeners(page), 0, 'nothing unsaved: no listener');
    await reload(page);
    assert.deepEqual(dialogs, [], 'nothing unsaved: no question');

    await page.getByRole('button', { name: 'New plant' }).click();
    const dialog = page.getByRole('dialog', { name: 'New plant' });
    await dialog.getByLabel('Name').waitFor();
    assert.equal(await beforeUnloadListeners(page), 0, 'an empty form holds nothing');
    await dialog.getByLabel('Id').fill('5');
    await dialog.getByLabel('Name').fill('Aloe');
    await listening(page, 1, 'the listener, once typed into');
    await reload(page);
    assert.deepEqual(dialogs, ['beforeunload'], 'the reload asked first');

    await page.getByRole('button', { name: 'New plant' }).click();
    await dialog.getByLabel('Name').fill('Aloe');
    await listening(page, 1, 'the listener, once typed into');
    await dialog.getByLabel('Name').fill('');
    await listening(page, 0, 'no listener, once emptied again');
    await dialog.getByLabel('Id').fill('5');
    await dialog.getByLabel('Name').fill('Aloe');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Created plant 5.' }).waitFor();
    assert.equal(await beforeUnloadListeners(page), 0, 'saved: no listener');
    await reload(page);
    assert.deepEqual(dialogs, ['beforeunload'], 'saved: no question');
    assert.deepEqual(errors(), []);
  });

  it('asks before a reload drops an edit, an endpoint or a token typed, and not for an edit opened and left as it was', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 7, name: 'Fern', tag: 'green' }]);
    const dialogs = dialogsOf(page);
    await signIn(page);
    await page.getByRole('button', { name: 'Edit plant 7', exact: true }).click();
    const edit = page.getByRole('dialog', { name: 'Edit plant 7' });
    await until(() => edit.getByRole('button', { name: 'Save' }).isEnabled(), 'the stored plant read into the form');
    assert.equal(await beforeUnloadListeners(page), 0, 'an edit as stored holds nothing');
    await edit.getByLabel('Tag').fill('red');
    await listening(page, 1, 'an edit typed into');
    await reload(page);
    assert.deepEqual(dialogs, ['beforeunload'], 'an edit');

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('dialog', { name: 'Add a webhook endpoint' }).getByLabel('URL').fill('https://example.com/plants');
    await listening(page, 1, 'an endpoint typed');
    await reload(page);
    assert.deepEqual(dialogs, ['beforeunload', 'beforeunload'], 'an endpoint');

    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('dialog', { name: 'Create a token' }).getByLabel('Name').fill('ci');
    await listening(page, 1, 'a token named');
    await reload(page);
    assert.deepEqual(dialogs, ['beforeunload', 'beforeunload', 'beforeunload'], 'a token');
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Fern', tag: 'green' });
    assert.deepEqual(errors(), []);
  });

  it('asks in its own dialog before Back leaves the section of a form typed into: Cancel stays, Leave drops it', async () => {
    const { page, errors } = await openConsole(after, { path: '/console#changes' });
    const dialogs = dialogsOf(page);
    await signIn(page);
    await page.getByRole('link', { name: 'Plants' }).click();
    await page.getByRole('button', { name: 'New plant' }).click();
    const form = page.getByRole('dialog', { name: 'New plant' });
    await form.getByLabel('Name').fill('Aloe');
    await listening(page, 1, 'a new plant typed');
    const question = page.getByRole('dialog', { name: 'Leave without saving?' });

    await page.goBack();
    await question.getByRole('button', { name: 'Cancel' }).click();
    await question.waitFor({ state: 'hidden' });
    assert.equal(await form.getByLabel('Name').inputValue(), 'Aloe', 'stayed, with what was typed');
    assert.equal(new URL(page.url()).hash, '#plants', 'the address names the view shown');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Plants');

    await page.goBack();
    await question.getByRole('button', { name: 'Leave' }).click();
    await page.getByRole('heading', { level: 1, name: 'Changes' }).waitFor();
    assert.deepEqual(await form.allInnerTexts(), [], 'the form dropped');
    assert.equal(await beforeUnloadListeners(page), 0, 'nothing unsaved left');
    await page.goForward();
    await page.getByRole('heading', { level: 1, name: 'Plants' }).waitFor();
    assert.deepEqual(await question.allInnerTexts(), [], 'nothing to ask of, going on');
    await reload(page);
    assert.deepEqual(dialogs, [], 'the browser never asked');
    assert.deepEqual(errors(), []);
  });
});
