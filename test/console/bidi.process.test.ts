import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Locator } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's bidirectional text browser tests", browserSkip);

/**
 * Plant names are any text, bidi controls and right-to-left scripts included: the console's sentences that
 * name plants isolate each name, so that a name's RIGHT-TO-LEFT OVERRIDE (U+202E) reorders nothing around it
 * ("Rose .enodnu eb tonnac sihT .deleted eb lliw (efas) exe.png" was shown).
 */

/**
 * Whether `first` is drawn before `second` in the element's text that holds both: left of it on the same
 * line, or on a line above (the words of a sentence in English are, unless a bidi control in a name before
 * them reversed them).
 */
function drawnBefore(element: Locator, first: string, second: string): Promise<boolean> {
  return element.evaluate(
    (root, [a, b]) => {
      const { document } = globalThis as unknown as {
        document: {
          createTreeWalker(root: unknown, what: number): { nextNode(): { textContent: string } | null };
          createRange(): {
            setStart(n: unknown, o: number): void;
            setEnd(n: unknown, o: number): void;
            getBoundingClientRect(): { left: number; top: number };
          };
        };
      };
      const walker = document.createTreeWalker(root, 4);
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        const text = node.textContent;
        if (!text.includes(a!) || !text.includes(b!)) continue;
        const place = (word: string) => {
          const range = document.createRange();
          range.setStart(node, text.indexOf(word));
          range.setEnd(node, text.indexOf(word) + word.length);
          return range.getBoundingClientRect();
        };
        const [one, two] = [place(a!), place(b!)];
        // Half a line apart or more: on different lines.
        return Math.abs(one.top - two.top) > 8 ? one.top < two.top : one.left < two.left;
      }
      throw new Error(`no text holds both ${a} and ${b}`);
    },
    [first, second],
  );
}

describe('the console: names in sentences', { skip, timeout: 180_000 }, () => {
  it('Delete and Delete selected isolate each name: its bidi controls reorder nothing after it', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Rose \u202Egnp.exe', tag: 'safe' },
      { id: 2, name: 'Clover' },
    ]);
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1,2', 'the plants');

    await page.getByRole('button', { name: 'Delete plant 1', exact: true }).click();
    let dialog = page.getByRole('dialog', { name: 'Delete plant 1?' });
    const sentence = dialog.locator('p').first();
    assert.equal(await drawnBefore(sentence, 'will', 'deleted'), true, '"will be deleted" reads left to right');
    assert.equal(await drawnBefore(sentence, 'This', 'undone'), true);
    assert.deepEqual(await sentence.locator('bdi').allTextContents(), ['Rose \u202Egnp.exe', 'safe']);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    dialog = page.getByRole('dialog', { name: 'Delete 2 plants?' });
    const names = dialog.locator('p').first();
    assert.equal(await drawnBefore(names, 'This', 'undone'), true, 'the sentence after the names reads left to right');
    assert.equal(await drawnBefore(names, 'Clo', 'ver'), true, 'the next name is not reversed');
    assert.deepEqual(await names.locator('bdi').allTextContents(), ['Rose \u202Egnp.exe', 'Clover']);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(errors(), []);
  });
});
