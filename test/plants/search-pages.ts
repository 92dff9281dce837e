import assert from 'node:assert/strict';
import { parseJson } from '@plant-store/client/json';
import type { StoredPlant } from '../../src/model/plant.js';
import type { TestApp } from '../helpers.js';
import { nextLink } from '../toolkit.js';

/**
 * Searches over HTTP, page by page, for the GET /plants search suites (search.test.ts,
 * search-parameters.test.ts): the plants seeded, a page read with its Link, the Links followed to the end,
 * a cursor taken from one.
 */

export async function seed(t: TestApp, plants: readonly StoredPlant[]): Promise<void> {
  const session = await t.store.plants.startImport();
  await session.add([...plants]);
  await session.commit({ createOnly: false });
}

export const params = (link: string) => new URL(link, 'http://x').searchParams;

export async function page(t: TestApp, url: string): Promise<{ plants: StoredPlant[]; next: string | undefined }> {
  const res = await t.call('GET', url);
  assert.equal(res.statusCode, 200, res.payload);
  return { plants: parseJson(res.payload) as StoredPlant[], next: nextLink(res.headers.link) };
}

/** Follows the Link headers from `url` to the end. */
export async function walk(t: TestApp, url: string): Promise<{ pages: StoredPlant[][]; links: string[] }> {
  const pages: StoredPlant[][] = [];
  const links: string[] = [];
  for (let next: string | undefined = url; next !== undefined;) {
    const answer = await page(t, next);
    pages.push(answer.plants);
    next = answer.next;
    if (next !== undefined) links.push(next);
    assert.ok(pages.length < 1000, 'paging does not end');
  }
  return { pages, links };
}

/** A cursor from the Link header of this request. */
export async function cursorOf(t: TestApp, url: string): Promise<string> {
  const { next } = await page(t, url);
  assert.ok(next, `${url} has a next page`);
  return params(next).get('cursor')!;
}

export const ids = (plants: StoredPlant[]) => plants.map((p) => p.id);
