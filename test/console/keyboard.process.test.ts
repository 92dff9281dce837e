import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's keyboard shortcut browser tests", browserSkip);

/** The focused element: `input#id`, or `tag: text`. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const { document } = globalThis as unknown as { document: { activeElement: { tagName: string; id: string; textContent: string } | null } };
    const active = document.activeElement!;
    return active.tagName === 'INPUT' ? `input#${active.id}` : `${active.tagName.toLowerCase()}: ${active.textContent.trim()}`;
  });
}

describe('the console: keyboard shortcuts', { skip, timeout: 180_000 }, () => {
  it('/ focuses Search, n opens New plant, Esc closes a dialog, ? lists the shortcuts; none fires while typing in a field', async () => {
    const { t, page, origin, requests, errors } = await openConsole(after);
    await addPlants(t, [{ id: 1, name: 'Fern' }]);
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1', 'the plant');
    const search = page.getByRole('searchbox', { name: 'Search' });
    const newPlant = page.getByRole('dialog', { name: 'New plant' });
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });

    // `/`: the focus in Search, the slash not typed there.
    await page.keyboard.press('/');
    assert.equal(await focused(page), 'input#plant-search');
    assert.equal(await search.inputValue(), '');
    // Typing in a field types: n, / and ? are letters there.
    await page.keyboard.type('n/?');
    assert.equal(await search.inputValue(), 'n/?');
    assert.equal(await newPlant.count(), 0);
    assert.equal(await help.count(), 0);
    await page.getByLabel('With tag').focus();
    await page.keyboard.type('n?');
    assert.equal(await page.getByLabel('With tag').inputValue(), 'n?');
    await page.getByLabel('Page size').focus();
    await page.keyboard.press('n');
    assert.equal(await newPlant.count(), 0, 'not in a select either');

    // `n` elsewhere: New plant, the focus in its first field, no n typed into it.
    await page.getByRole('button', { name: 'Export CSV' }).focus();
    await page.keyboard.press('n');
    await newPlant.waitFor();
    await until(async () => (await focused(page)).startsWith('input#'), 'the focus in the dialog');
    assert.equal(await newPlant.getByLabel('Id').inputValue(), '');
    // In a dialog, shortcuts are off: `?` types, `/` too.
    await page.keyboard.type('?/');
    assert.equal(await newPlant.getByLabel('Id').inputValue(), '?/');
    assert.equal(await help.count(), 0);
    // Esc closes it.
    await page.keyboard.press('Escape');
    await newPlant.waitFor({ state: 'detached' });

    // `?`: the list of shortcuts, in a dialog that Esc closes; and the header's Shortcuts button opens it too.
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('?');
    await help.waitFor();
    assert.deepEqual(await help.locator('tbody tr').allInnerTexts(), [
      '/\tFocus Search (Plants)',
      'n\tNew plant (Plants)',
      'Esc\tClose a dialog',
      '?\tShow these shortcuts',
    ]);
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Shortcuts' }).click();
    await help.waitFor();
    await help.getByRole('button', { name: 'Close' }).click();
    await help.waitFor({ state: 'detached' });

    // With Ctrl, Alt or Meta held, the keys are the browser's.
    await page.getByRole('button', { name: 'Export CSV' }).focus();
    await page.keyboard.press('Alt+n');
    await page.keyboard.press('Control+/');
    assert.equal(await newPlant.count(), 0);
    assert.notEqual(await focused(page), 'input#plant-search');

    // On a checkbox, a key is still a shortcut.
    await page.getByRole('checkbox', { name: 'Select Fern' }).focus();
    await page.keyboard.press('/');
    assert.equal(await focused(page), 'input#plant-search');

    // Elsewhere than the plants, `/` and `n` do nothing; `?` still lists.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.keyboard.press('n');
    await page.keyboard.press('/');
    assert.equal(await newPlant.count(), 0);
    await page.keyboard.press('?');
    await help.waitFor();
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
    for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
    assert.deepEqual(errors(), []);
  });

  it('does not open New plant for a token that cannot write', async () => {
    const { t, page, errors } = await openConsole(after);
    await signIn(page, await t.tokenWith('plants:read'));
    await page.getByText('No plants found.').waitFor();
    await page.keyboard.press('n');
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    assert.equal(await page.getByRole('dialog', { name: 'New plant' }).count(), 0);
    assert.deepEqual(errors(), []);
  });
});
