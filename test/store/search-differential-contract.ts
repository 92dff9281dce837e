import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import type { StoredPlant } from '../../src/model/plant.js';
import type { PlantId } from '../../src/model/plant-id.js';
import { PLANT_SORTS, type PageKey, type PlantSort, type Store } from '../../src/store/store.js';
import { FUZZING } from '../tier.js';

/**
 * A differential test of finding plants: random names (accents, ß and ẞ, the Turkish İ and ı, Greek
 * sigmas and iota subscripts, combining marks, ligatures, Cherokee, emoji, CJK, LIKE's and FTS5's
 * syntax characters) written, replaced, patched and deleted at random, searched between the writes
 * (random q of 1 to 6 characters, often a piece of a stored name in another case, random tags, every
 * order, small pages) and compared, page after page, with a plain model of the plants: the documented
 * folding rule as Unicode's table gives it, the order by code point then id, keyset pages.
 */

/**
 * Unicode's full case folding (CaseFolding.txt, C and F, as Python's str.casefold gives it) of every
 * character the names are made of, copied rather than computed by the product's foldCase. Cherokee
 * folds to its capitals in the table and to small letters in foldCase: the same classes, so the same
 * substring test.
 */
// prettier-ignore
const FOLDS: Readonly<Record<string, string>> = {
  a: 'a', A: 'a', b: 'b', B: 'b', e: 'e', f: 'f', i: 'i', I: 'i', s: 's', S: 's', k: 'k', N: 'n', O: 'o', R: 'r',
  'İ': 'i\u0307', 'ı': 'ı', 'ß': 'ss', 'ẞ': 'ss', 'ſ': 's', '\u212A': 'k', 'é': 'é', 'É': 'é', '\u0301': '\u0301', '\u0307': '\u0307',
  'σ': 'σ', 'Σ': 'σ', 'ς': 'σ', 'ΐ': 'ι\u0308\u0301', 'ι': 'ι', 'ᾼ': 'αι', 'ᾳ': 'αι', '\u0345': 'ι', 'ﬃ': 'ffi',
  'Ꭰ': 'Ꭰ', 'ꭰ': 'Ꭰ', 'ǅ': 'ǆ', 'ǆ': 'ǆ', '\u2126': 'ω', 'ω': 'ω', '𐐀': '𐐨', '𐐨': '𐐨', '😀': '😀', '中': '中',
  '%': '%', _: '_', '\\': '\\', '"': '"', "'": "'", '*': '*', '-': '-', ' ': ' ', '(': '(', ':': ':', '^': '^',
};

const fold = (text: string) => [...text].map((c) => FOLDS[c] ?? assert.fail(`no fold for U+${c.codePointAt(0)!.toString(16)}`)).join('');

/** A seeded generator (mulberry32): the same writes and searches on every run and every store. */
class Random {
  constructor(private state: number) {}
  /** An integer from min to max, both included. */
  nextInt(min: number, max: number): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return min + Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[this.nextInt(0, items.length - 1)]!;
  }
  /** Letters often (so that names share trigrams), the rest now and then. */
  text(min: number, max: number): string {
    return Array.from({ length: this.nextInt(min, max) }, () => this.pick(this.nextInt(0, 9) < 6 ? COMMON : ALL)).join('');
  }
}
const COMMON = ['a', 'A', 'b', 's', 'S', 'i', 'I', 'e', 'é', 'É', ' '];
const ALL = Object.keys(FOLDS);
const TAGS = ['x', 'y', '', 'X'];

const byId = (a: StoredPlant, b: StoredPlant) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0);
function compare(sort: PlantSort): (a: StoredPlant, b: StoredPlant) => number {
  const byName = (a: StoredPlant, b: StoredPlant) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)) || byId(a, b);
  const ascending = sort === 'id' || sort === '-id' ? byId : byName;
  return sort.startsWith('-') ? (a, b) => ascending(b, a) : ascending;
}

interface Search {
  q?: string | undefined;
  tags?: string[] | undefined;
  sort: PlantSort;
  limit: number;
}

function selected(plants: Iterable<StoredPlant>, { q, tags, sort }: Search): StoredPlant[] {
  const folded = q === undefined ? undefined : fold(q);
  return [...plants]
    .filter((p) => (folded === undefined || fold(p.name).includes(folded)) && (!tags?.length || (p.tag !== undefined && tags.includes(p.tag))))
    .sort(compare(sort));
}

/** A q: random characters, or a piece of a stored name with its case changed here and there. */
function query(rng: Random, names: string[]): string {
  if (names.length > 0 && rng.nextInt(0, 2) > 0) {
    const chars = [...names[rng.nextInt(0, names.length - 1)]!];
    const start = rng.nextInt(0, chars.length - 1);
    const piece = chars.slice(start, start + rng.nextInt(1, 6));
    const swapped = (c: string) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase());
    // Only into characters the table folds (ﬃ's capitals FFI are not in it).
    return piece.map((c) => (rng.nextInt(0, 3) === 0 && [...swapped(c)].every((s) => s in FOLDS) ? swapped(c) : c)).join('');
  }
  return rng.text(1, 4);
}

async function page(store: Store, search: Search, after: PageKey | undefined): Promise<{ plants: StoredPlant[]; next?: PageKey | undefined }> {
  const found = await store.plants.page({ ...search, after });
  const plants = parseJson(found.json) as StoredPlant[];
  assert.equal(found.count, plants.length);
  return { plants, next: found.next };
}

/** The model's plants, and the writes that change them on the store and in the model alike. */
class Model {
  readonly plants = new Map<string, StoredPlant>();
  constructor(
    private readonly store: Store,
    private readonly rng: Random,
  ) {}

  private name(): string {
    return this.rng.text(1, 10);
  }

  private tag(): string | undefined {
    const i = this.rng.nextInt(0, TAGS.length);
    return i === TAGS.length ? undefined : TAGS[i];
  }

  /** Ids from a small range (so that writes hit plants that exist) and the two ends of int64. */
  private id(): PlantId {
    const i = this.rng.nextInt(0, 41);
    return i === 40 ? 2n ** 63n - 1n : i === 41 ? -(2n ** 63n) : i - 5;
  }

  /** One random write; answers the id written. */
  async write(): Promise<PlantId> {
    const id = this.id();
    const key = String(id);
    const stored = this.plants.get(key);
    const kind = this.rng.nextInt(0, 9);
    if (stored && kind === 0) {
      await this.store.plants.delete(id);
      this.plants.delete(key);
    } else if (stored && kind <= 3) {
      const name = this.rng.nextInt(0, 2) === 0 ? undefined : this.name();
      const tag = name === undefined || this.rng.nextInt(0, 1) === 0 ? (this.tag() ?? null) : undefined;
      await this.store.plants.patch(id, { name, tag });
      const tagged = tag === undefined ? stored.tag : (tag ?? undefined);
      this.plants.set(key, { id, name: name ?? stored.name, ...(tagged === undefined ? {} : { tag: tagged }) });
    } else {
      const tag = this.tag();
      const plant: StoredPlant = { id, name: this.name(), ...(tag === undefined ? {} : { tag }) };
      await this.store.plants.put(plant);
      this.plants.set(key, plant);
    }
    return id;
  }

  search(): Search {
    const names = [...this.plants.values()].map((p) => p.name);
    const hasQ = this.rng.nextInt(0, 5) > 0;
    const tagCount = this.rng.nextInt(0, 3) === 0 ? this.rng.nextInt(1, 2) : 0;
    return {
      q: hasQ ? query(this.rng, names) : undefined,
      tags: tagCount === 0 ? undefined : Array.from({ length: tagCount }, () => TAGS[this.rng.nextInt(0, TAGS.length - 1)]!),
      sort: PLANT_SORTS[this.rng.nextInt(0, 3)]!,
      limit: this.rng.nextInt(1, 5),
    };
  }
}

const describeSearch = (search: unknown) => JSON.stringify(search, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

/** `shortPages`: the store may answer a page short of its limit, even empty, with a next key (a bounded scan). */
async function assertWalk(store: Store, model: Model, search: Search, when: string, shortPages: boolean): Promise<void> {
  const want = selected(model.plants.values(), search);
  const got: StoredPlant[] = [];
  let after: PageKey | undefined;
  for (let pages = 0; ; pages++) {
    assert.ok(pages <= (shortPages ? model.plants.size : want.length) + 1, `${when}: paging does not end, ${describeSearch(search)}`);
    const { plants, next } = await page(store, search, after);
    got.push(...plants);
    if (next === undefined) break;
    const last = plants.at(-1);
    if (!shortPages) {
      assert.deepEqual(next, last && { id: last.id, name: last.name }, `${when}: next is the last plant's key`);
    } else if (last) {
      assert.ok(compare(search.sort)(last, { id: next.id, name: next.name ?? '' }) <= 0, `${when}: next key is not before the page's last plant`);
    }
    after = next;
  }
  assert.deepEqual(got, want, `${when}: ${describeSearch(search)}`);
  if (search.limit === 1) assert.equal(await store.plants.count(search), want.length, `${when}: count ${describeSearch(search)}`);
  if (search.limit === 2) {
    const snapshot = await store.plants.export(search);
    const rows: StoredPlant[] = [];
    for await (const chunk of snapshot) rows.push(...chunk);
    assert.deepEqual(rows, want, `${when}: export ${describeSearch(search)}`);
  }
}

/**
 * `shortPages`: the store may answer short pages with a next key (a bounded scan). `openPair`: two stores on
 * one database, as two instances hold it: written through one, searched through the other.
 */
export function searchDifferentialContract(
  name: string,
  open: () => Promise<Store>,
  { shortPages = false, openPair }: { shortPages?: boolean; openPair?: () => Promise<[Store, Store]> } = {},
): void {
  describe(`search differential contract: ${name}`, () => {
    const run = async (seed: number, steps: number, stores: [Store, Store]) => {
      const [writer, reader] = stores;
      try {
        const model = new Model(writer, new Random(seed));
        for (let step = 0; step < steps; step++) {
          await model.write();
          if (step % 2 === 1) await assertWalk(reader, model, model.search(), `seed ${seed} step ${step}`, shortPages);
        }
      } finally {
        await Promise.all([...new Set(stores)].map((store) => store.close()));
      }
    };
    const one = async (): Promise<[Store, Store]> => {
      const store = await open();
      return [store, store];
    };

    it('answers searches between random writes as the plain model does (q, tags, orders, pages, counts)', async () => {
      await run(1, 240, await one());
    });

    it('answers searches between random writes as the plain model does, more seeds', FUZZING, async () => {
      for (const seed of [2, 3, 4, 5, 6]) await run(seed, 400, await one());
    });

    it(
      'answers at once through another instance of the same database, as the plain model does',
      { skip: !openPair && 'one instance only' },
      async () => {
        await run(21, 160, await openPair!());
      },
    );

    it('pages across writes between the pages: in order, nothing repeated, every plant left alone found once', async () => {
      const store = await open();
      try {
        const model = new Model(store, new Random(11));
        for (let i = 0; i < 60; i++) await model.write();
        for (let round = 0; round < 40; round++) {
          const search = model.search();
          const touched = new Set<string>();
          const before = selected(model.plants.values(), search);
          const got: StoredPlant[] = [];
          let after: PageKey | undefined;
          for (;;) {
            const { plants, next } = await page(store, search, after);
            got.push(...plants);
            if (next === undefined) break;
            after = next;
            for (let w = 0; w < 2; w++) touched.add(String(await model.write()));
          }
          const when = `round ${round}: ${describeSearch(search)}`;
          const order = compare(search.sort);
          for (let i = 1; i < got.length; i++) assert.ok(order(got[i - 1]!, got[i]!) < 0, `${when}: in order, nothing repeated`);
          const kept = before.filter((p) => !touched.has(String(p.id)));
          const seen = new Set(got.map((p) => String(p.id)));
          for (const plant of kept) assert.ok(seen.has(String(plant.id)), `${when}: ${describeSearch(plant)} left alone is found`);
        }
      } finally {
        await store.close();
      }
    });
  });
}
