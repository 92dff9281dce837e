/** What the plants table shows: found by name (q) and tags, in an order. The export takes the same. */

export type Sort = 'id' | '-id' | 'name' | '-name';

export interface Filter {
  q: string;
  tags: string[];
  sort: Sort;
}

/** The filter as the API's query parameters (an empty search or tag list is no filter). */
export function filterQuery({ q, tags, sort }: Filter) {
  return { ...(q !== '' && { q }), ...(tags.length > 0 && { tag: tags }), sort };
}
