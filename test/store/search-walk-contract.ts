import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StoredPlant } from '../../src/model/plant.js';
import { searchWalk } from '../../src/store/search-walk.js';
import { PLANT_SORTS, type Store } from '../../src/store/store.js';
import { listPlants } from '../helpers.js';
import { expected, walk } from './search-oracle.js';

/**
 * A search walks the start of its order first (src/store/search-walk.ts: searchWalk(limit + 1) plants,
 * 192 for a page of 2), and is answered from the trigram index when that walk did not fill the page: the
 * pages must be the same either way, page after page, wherever the walk stops. The names below stand in
 * blocks, in name order and (their ids following it) in id order alike, so that with small pages some are
 * found by the walk (inside a block of matches) and some only by the index (after a block of more names
 * than the walk reads, or with a page boundary where the walk found all but one of its rows).
 */

const PAGE = 2;
const WALKED = searchWalk(PAGE + 1);
/** Where the blocks start in the catalogue, and the id of its plant at a place. */
const FERN = WALKED + 200;
const GAP = FERN + 150;
const idAt = (i: number) => 1000 + 3 * i;

/** The catalogue in name order: [name, holds "fern"]. */
function catalogue(): string[] {
  const block = (word: string, count: number) => Array.from({ length: count }, (_, i) => `${word} ${String(i).padStart(3, '0')}`);
  return [
    // More names than a walk reads before the first match: the first page is found through the index.
    ...block('Alba', WALKED + 200),
    ...block('Fern', 150),
    ...block('Gap', WALKED + 8),
    // Two matches, then more names than a walk reads, then one: the walk after "Gap" finds a page of 2
    // but not the one more that says whether more follow.
    ...block('Hfern', 2),
    ...block('Hgap', WALKED + 8),
    ...block('Ifern', 1),
    // The term twice in a name, in either case.
    ...block('Zfern FERN', 10),
  ];
}

export function searchWalkContract(name: string, open: () => Promise<Store>): void {
  describe(`search walk contract: ${name}`, () => {
    let store: Store;
    let plants: StoredPlant[];
    before(async () => {
      store = await open();
      plants = catalogue().map((plantName, i) => ({ id: idAt(i), name: plantName, ...(i % 3 === 0 ? { tag: 'odd' } : {}) }));
      const session = await store.plants.startImport();
      await session.add(plants);
      await session.commit({ createOnly: false });
    });
    after(() => store.close());

    for (const sort of PLANT_SORTS) {
      it(`sort=${sort}: every page of 2 is the matches in order, found by walking or through the index`, async () => {
        for (const q of ['fern', 'FERN', 'fern fern', 'ern 0']) {
          const pages = await walk(store, { q, sort }, PAGE);
          assert.deepEqual(pages.flat(), expected(plants, { q, sort }), `q=${q}`);
        }
      });
    }

    it('pages of other sizes, and with a tag, end where the matches do', async () => {
      for (const sort of PLANT_SORTS) {
        for (const limit of [1, 3, 149, 151, 500]) {
          assert.deepEqual(
            (await walk(store, { q: 'Fern', sort }, limit)).flat(),
            expected(plants, { q: 'Fern', sort }),
            `sort=${sort} limit=${limit}`,
          );
        }
        assert.deepEqual((await walk(store, { q: 'fern', tags: ['odd'], sort }, PAGE)).flat(), expected(plants, { q: 'fern', tags: ['odd'], sort }));
      }
    });

    it('a page from a key inside a block of matches, and from the key of its last match', async () => {
      const fern = expected(plants, { q: 'fern', sort: 'name' });
      for (const at of [0, 75, 149, 150, 151]) {
        const key = fern[at]!;
        const page = await listPlants(store.plants, { q: 'fern', sort: 'name', limit: 3, after: { id: key.id, name: key.name } });
        assert.deepEqual(page, fern.slice(at + 1, at + 4), `after ${key.name}`);
      }
    });

    it('sees every write at once, whichever way a page is found', async () => {
      const written = plants.map((p) => ({ ...p }));
      const write = async (plant: StoredPlant) => {
        await store.plants.put(plant);
        const i = written.findIndex((p) => p.id === plant.id);
        if (i >= 0) written[i] = plant;
        else written.push(plant);
      };
      const remove = async (id: number) => {
        assert.equal(await store.plants.delete(id), 'deleted');
        written.splice(
          written.findIndex((p) => p.id === id),
          1,
        );
      };
      const check = async (what: string) => {
        for (const sort of PLANT_SORTS) {
          assert.deepEqual((await walk(store, { q: 'fern', sort }, 50)).flat(), expected(written, { q: 'fern', sort }), `${what}, sort=${sort}`);
          const first = await listPlants(store.plants, { q: 'fern', sort, limit: PAGE });
          assert.deepEqual(first, expected(written, { q: 'fern', sort }).slice(0, PAGE), `${what}, the first page, sort=${sort}`);
        }
      };
      // Renamed into the matches: before all others (the first page found through the index), and into the
      // block the walk finds from a key inside it (from the block after it in id order).
      await write({ id: idAt(0), name: 'Aaa fern new' });
      await write({ id: idAt(GAP + 3), name: 'Fern 005 renamed' });
      await check('renamed into the matches');
      // Renamed out of them, deleted, and a new plant at either end of the order.
      await write({ id: idAt(FERN), name: 'Alba fer' });
      await remove(idAt(FERN + 1));
      await write({ id: 1, name: 'fern first by id' });
      await write({ id: 1_000_000, name: 'Zzz fern last' });
      await check('renamed out, deleted, added');
    });
  });
}
