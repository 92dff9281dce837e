import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's tag search browser tests", browserSkip);

/** A tag is any text, a comma included ("red, white"): the console finds such a plant by it. */
describe('the console: tags that hold a comma', { skip, timeout: 180_000 }, () => {
  it('are searched whole from the address, and in the field in double quotes', async () => {
    const { t, page, errors } = await openConsole(after, { path: '/console#plants?tag=red%2C%20white' });
    await addPlants(t, [
      { id: 1, name: 'Comma tag plant', tag: 'red, white' },
      { id: 2, name: 'Red', tag: 'red' },
      { id: 3, name: 'White', tag: 'white' },
      { id: 4, name: 'Shade', tag: 'shade' },
    ]);
    await signIn(page);
    const field = page.getByLabel('With tag');
    await until(async () => (await shownIds(page)).join() === '1', 'the plant tagged "red, white" from the address');
    assert.equal(await field.inputValue(), '"red, white"', 'the field shows it as it reads it');

    await field.fill('"red, white", shade');
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => (await shownIds(page)).join() === '1,4', 'the plants tagged "red, white" or shade');
    assert.equal(new URL(page.url()).hash, '#plants?tag=red%2C+white&tag=shade');

    // Unquoted, the commas separate tags, as they always did.
    await field.fill('red, white');
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => (await shownIds(page)).join() === '2,3', 'the plants tagged red or white');
    assert.deepEqual(errors(), []);
  });
});
