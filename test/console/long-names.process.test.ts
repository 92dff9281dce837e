import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's long names browser tests", browserSkip);

/** A table's box and its buttons, measured in the page: [box client width, box scroll width, each Edit button's right edge within the box]. */
interface Measured {
  client: number;
  scroll: number;
  editRights: number[];
}

describe('the console: long names', { skip, timeout: 180_000 }, () => {
  it('one unbroken name of 256 letters (and a tag of 64) wraps in its cell: the table fits its box, every Edit and Delete in sight', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'a'.repeat(256), tag: 't'.repeat(64) },
      { id: 2, name: 'Short' },
    ]);
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page);
    await until(async () => (await shownIds(page)).join() === '1,2', 'the plants');
    const box = page.getByRole('region', { name: 'Plants table' });
    const measured = await box.evaluate((element) => {
      const wrap = element as unknown as {
        clientWidth: number;
        scrollWidth: number;
        getBoundingClientRect(): { left: number };
        querySelectorAll(selector: string): ArrayLike<{ getBoundingClientRect(): { right: number } }>;
      };
      const left = wrap.getBoundingClientRect().left;
      return {
        client: wrap.clientWidth,
        scroll: wrap.scrollWidth,
        editRights: Array.from(wrap.querySelectorAll('td.row-actions button')).map((button) => button.getBoundingClientRect().right - left),
      } satisfies Measured;
    });
    assert.ok(measured.scroll <= measured.client, `the table is ${measured.scroll} px wide in a box of ${measured.client}`);
    assert.equal(measured.editRights.length, 4);
    for (const right of measured.editRights) assert.ok(right <= measured.client, `a button ends at ${right} px, in a box of ${measured.client}`);
    assert.deepEqual(errors(), []);
  });
});
