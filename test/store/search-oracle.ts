import assert from 'node:assert/strict';
import { parseJson } from '@plant-store/client/json';
import { type ListOptions, type PageKey, type PlantSort, type Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';

/**
 * What a search must answer, as a plain JavaScript filter and sort make it of the same plants: the oracle
 * of the search contract suites (search-contract.ts, search-walk-contract.ts, search-index-contract.ts), with
 * the plants and queries they search.
 */

export type Filter = Pick<ListOptions, 'q' | 'tags' | 'sort'>;

/** By code point, then by id: the order the stores give (SQLite BINARY, PostgreSQL COLLATE "C"). */
function compare(sort: PlantSort): (a: StoredPlant, b: StoredPlant) => number {
  const byId = (a: StoredPlant, b: StoredPlant) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0);
  const byName = (a: StoredPlant, b: StoredPlant) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)) || byId(a, b);
  const ascending = sort === 'id' || sort === '-id' ? byId : byName;
  return sort.startsWith('-') ? (a, b) => ascending(b, a) : ascending;
}

/**
 * Unicode's full case folding (CaseFolding.txt, statuses C and F) of the characters these tests use, copied
 * from the table rather than computed by the product's foldCase, so that the expectations never share its
 * mistakes. ASCII letters fold to lower case; the characters listed fold as given (a lower-case letter, an
 * emoji or a private-use character to itself); any other fails the test until it is added from the table.
 */
const FOLDS: Readonly<Record<string, string>> = {
  É: 'é',
  é: 'é',
  ß: 'ss',
  ẞ: 'ss',
  ı: 'ı',
  Δ: 'δ',
  δ: 'δ',
  Ο: 'ο',
  ο: 'ο',
  ό: 'ό',
  Σ: 'σ',
  σ: 'σ',
  ς: 'σ',
  τ: 'τ',
  υ: 'υ',
  φ: 'φ',
  ﬁ: 'fi',
  '𐐀': '𐐨',
  '𐐁': '𐐩',
  '𐐨': '𐐨',
  '𐐩': '𐐩',
  '😀': '😀',
  '\uE000': '\uE000',
  // A noncharacter: CaseFolding.txt does not list it, so it folds to itself.
  '\uFDD0': '\uFDD0',
};

function fold(text: string): string {
  let folded = '';
  for (const char of text) {
    if (char <= '\x7f') folded += char.toLowerCase();
    else if (Object.hasOwn(FOLDS, char)) folded += FOLDS[char];
    else assert.fail(`the search tests' fold has no U+${char.codePointAt(0)!.toString(16).toUpperCase()}: add it from Unicode's CaseFolding.txt`);
  }
  return folded;
}

/** What the filter selects, in its order, as the stores should answer. */
export function expected(plants: readonly StoredPlant[], { q, tags, sort = 'id' }: Filter): StoredPlant[] {
  const folded = q === undefined ? undefined : fold(q);
  return plants
    .filter((p) => (folded === undefined || fold(p.name).includes(folded)) && (!tags?.length || (p.tag !== undefined && tags.includes(p.tag))))
    .sort(compare(sort));
}

/** Every page of a list, `limit` at a time, following each page's next key. */
export async function walk(store: Store, filter: Filter, limit: number): Promise<StoredPlant[][]> {
  const pages: StoredPlant[][] = [];
  let after: PageKey | undefined;
  for (;;) {
    const page = await store.plants.page({ ...filter, limit, after });
    const plants = parseJson(page.json) as StoredPlant[];
    assert.equal(page.count, plants.length);
    pages.push(plants);
    if (page.next === undefined) return pages;
    assert.equal(plants.length, limit, 'only the last page is short');
    const last = plants.at(-1)!;
    assert.deepEqual(page.next, { id: last.id, name: last.name }, 'next is the key of the last plant');
    after = page.next;
    assert.ok(pages.length <= 10_000, 'paging does not end');
  }
}

export async function exported(store: Store, filter: Filter): Promise<StoredPlant[]> {
  const snapshot = await store.plants.export(filter);
  const all: StoredPlant[] = [];
  for await (const chunk of snapshot) all.push(...chunk);
  return all;
}

/** Plants whose names exercise folding, ties and the order by code point. */
export const CATALOGUE: StoredPlant[] = [
  { id: 1, name: 'Boston Fern', tag: 'fern' },
  { id: 2, name: 'boston fern', tag: 'fern' },
  { id: -5, name: 'BOSTON FERN', tag: 'tropical' },
  { id: 2n ** 63n - 1n, name: 'Boston Fern', tag: 'fern' },
  { id: -(2n ** 63n), name: 'Boston Fern' },
  { id: 7, name: 'Échevéria élégante', tag: 'succulent' },
  { id: 8, name: 'ÉCHEVÉRIA ÉLÉGANTE', tag: 'succulent' },
  { id: 9, name: 'Straße-Farn', tag: '' },
  { id: 10, name: 'STRASSE', tag: 'tropical' },
  { id: 11, name: 'ΟΔΟΣ φυτό', tag: 'tropical' },
  { id: 12, name: '𐐀𐐁 Deseret ivy', tag: 'tropical' },
  { id: 13, name: '𐐨𐐩 deseret IVY' },
  { id: 14, name: 'Aloe "vera" 100% _pure_ \\ back', tag: 'succulent' },
  { id: 15, name: 'aloe', tag: 'succulent' },
  { id: 16, name: 'Zebra', tag: 'tropical' },
  { id: 17, name: 'zebra', tag: 'tropical' },
  { id: 18, name: '\uE000 private use', tag: 'fern' },
  { id: 19, name: '😀 smile cactus', tag: 'succulent' },
  { id: 20, name: 'ıIi dotless', tag: 'fern' },
  { id: 21, name: 'a', tag: 'fern' },
  { id: 22, name: 'ab', tag: 'fern' },
  { id: 23, name: 'Ficus ﬁcus', tag: 'tropical' },
  // A noncharacter PostgreSQL's fold once stood in for ı with: this name folded as though it held ı.
  { id: 24, name: 'x\uFDD0y' },
];

export const QUERIES = [
  'fern',
  'FERN',
  'Fern',
  'boston f',
  'é',
  'É',
  'échevéria',
  'ÉLÉGANTE',
  'strasse',
  'STRAẞE',
  'ß',
  'ss',
  'οδοσ',
  'ΟΔΟς',
  '𐐨',
  '𐐀𐐁',
  '𐐨𐐩 d',
  '"vera"',
  '"',
  '100%',
  '%',
  '_pure_',
  '_',
  '\\',
  ' \\ ',
  'a',
  'ab',
  'abc',
  'ı',
  '\uFDD0',
  'xıy',
  'i',
  'I',
  'ficus',
  '😀',
  '😀 s',
  '\uE000',
  'nothing at all',
  ' ',
];
