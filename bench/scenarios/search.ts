import { encodeCursor } from '../../src/plants/cursor.js';
import { CATALOGUE_TYPED, halfWayByName } from '../names.js';
import type { Scenario } from './scenario.js';

/**
 * Finding plants at 1M plants (names from bench/names.ts): a page costs the same at any depth, and search
 * and several tags are served by indexes; each is a share of the baseline's page of 100. Then search as
 * you type: 3-letter q, a page of 50, in id and in name order, over 200k plants, at a pace a console full
 * of people typing makes (open loop); and the same in a catalogue of common words (bench/names.ts), where a
 * 3-letter q is held by one name in ten and a 2-letter one by three in ten, one search at a time.
 */

let halfWay: string | undefined;

/** The cursor of the page half-way through the seeded million in name order (sorting a million names takes a second or two: once). */
function halfWayCursor(): string {
  halfWay ??= encodeCursor(halfWayByName(1_000_000), { tags: [], sort: 'name' });
  return halfWay;
}

/** Searches as people start typing them: the first three letters of words of the seeded names (bench/names.ts). */
const TYPED = ['fer', 'pal', 'alo', 'ros', 'var', 'gol', 'orc', 'mon', 'lav', 'sil', 'bas', 'red'];
/** Searches per second: many people typing at once (each keystroke one request). */
const TYPING_RATE = 100;

export const SEARCH: Scenario[] = [
  {
    key: 'name1m',
    title: 'GET /plants?sort=name&limit=100, first page, 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'list', query: 'sort=name&limit=100' }),
  },
  {
    key: 'namedeep1m',
    title: 'GET /plants?sort=name&limit=100, the page half-way (cursor), 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'list', query: `sort=name&limit=100&cursor=${halfWayCursor()}` }),
  },
  {
    key: 'q1m',
    title: 'GET /plants?q=fern&limit=100 from random ids, 1M plants (1 name in 53 holds it)',
    connections: 64,
    seeded: 1_000_000,
    // Pages from anywhere but the last 5% (whose pages would be short).
    workload: () => ({ kind: 'page', plants: 1_000_000, limit: 100, query: 'q=fern', span: 950_000 }),
  },
  {
    key: 'typeid200k',
    title: `GET /plants?q=<3 letters>&limit=50, id order, at ${TYPING_RATE} req/s (open loop), 200k plants`,
    connections: 16,
    seeded: 200_000,
    workload: () => ({ kind: 'lists', queries: TYPED.map((q) => `q=${q}&limit=50`) }),
    rate: TYPING_RATE,
  },
  {
    key: 'typename200k',
    title: `GET /plants?q=<3 letters>&limit=50&sort=name, name order, at ${TYPING_RATE} req/s (open loop), 200k plants`,
    connections: 16,
    seeded: 200_000,
    workload: () => ({ kind: 'lists', queries: TYPED.map((q) => `q=${q}&limit=50&sort=name`) }),
    rate: TYPING_RATE,
  },
  ...(['three', 'two'] as const).flatMap((length) =>
    (['id', 'name'] as const).map((sort): Scenario => ({
      key: `typeword${length === 'three' ? 3 : 2}${sort}`,
      title:
        `GET /plants?q=<${length === 'three' ? '3 letters, 10%' : '2 letters, 30%'} of the names>&limit=50` +
        `${sort === 'name' ? '&sort=name' : ''}, ${sort} order, one at a time, 200k plants of common words`,
      connections: 1,
      seeded: 200_000,
      names: 'catalogue',
      workload: () => ({ kind: 'lists', queries: CATALOGUE_TYPED[length].map((q) => `q=${q}&limit=50${sort === 'name' ? '&sort=name' : ''}`) }),
    })),
  ),
  {
    key: 'tags1m',
    title: 'GET /plants?tag=tropical&tag=succulent&limit=100 from random ids, 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'page', plants: 1_000_000, limit: 100, query: 'tag=tropical&tag=succulent' }),
  },
];
