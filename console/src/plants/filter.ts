import type { PlantsView } from '../route.js';

/** What the plants table shows, and the export saves: found by name (q) and tags, in an order. */
export type Filter = Pick<PlantsView, 'q' | 'tags' | 'sort'>;

/** The filter as the API's query parameters (an empty search or tag list is no filter). */
export function filterQuery({ q, tags, sort }: Filter) {
  return { ...(q !== '' && { q }), ...(tags.length > 0 && { tag: tags }), sort };
}
