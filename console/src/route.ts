/**
 * The view in the address: the section after the `#`, and for the plants its search, tags, order and page
 * size as a query after it: `#plants?q=fern&tag=shade&tag=tropical&sort=-name&limit=50`. So a reload keeps
 * the view, a link opens the same view (after signing in), and Back returns to the view before: each change
 * of the view is a new entry in the tab's history. The token is never here (it stays in sessionStorage).
 * In the fragment, not the path's query: the page is one document at /console, and a fragment never reaches
 * the service, its logs or a proxy's.
 *
 * Pure functions of text, no DOM: the unit tests run them in Node (test/console/route.test.ts).
 */

export const SECTIONS = [
  ['plants', 'Plants'],
  ['changes', 'Changes'],
  ['webhooks', 'Webhooks'],
  ['tokens', 'Tokens'],
  ['about', 'About'],
] as const;
export type Section = (typeof SECTIONS)[number][0];

/** The orders the API's `sort` takes: by id or name, `-` for descending. */
export type Sort = 'id' | '-id' | 'name' | '-name';
export const SORTS: ReadonlyArray<readonly [Sort, string]> = [
  ['id', 'Id, ascending'],
  ['-id', 'Id, descending'],
  ['name', 'Name, A to Z'],
  ['-name', 'Name, Z to A'],
];

export const PAGE_SIZES = [10, 25, 50, 100] as const;
export type PageSize = (typeof PAGE_SIZES)[number];

/** What the plants table shows: found by name (q) and tags (any of them), in an order, so many a page. */
export interface PlantsView {
  q: string;
  tags: string[];
  sort: Sort;
  /**
   * Whether the order was chosen (a header clicked, Sort by, or `sort` in the address) rather than the
   * default one: a click on the Id header sorts by id ascending when the order is the default one, though
   * that is by id ascending too, and descending only at the second click, as on any other header.
   */
  sortChosen: boolean;
  limit: PageSize;
}

export const DEFAULT_VIEW: PlantsView = { q: '', tags: [], sort: 'id', sortChosen: false, limit: 25 };

export interface Route {
  section: Section;
  /** The plants view the address names (the default one when it names none, or another section). */
  plants: PlantsView;
}

/**
 * The tags an address names, one a `tag` parameter, each whole (a tag may hold a comma: "red, white"):
 * trimmed, empty ones and repeats dropped.
 */
function addressTags(texts: readonly string[]): string[] {
  return unique(texts.map((tag) => tag.trim()));
}

/**
 * Tags as a person types them in the field: separated by commas, trimmed, empty ones and repeats dropped;
 * a tag in double quotes is taken whole, commas included (`"red, white", shade`; `""` is a quote in it).
 */
export function splitTags(text: string): string[] {
  const tags: string[] = [];
  let tag = '';
  // Within quotes; and how much of `tag` was quoted (kept as it is: only the end of what follows the quotes is trimmed).
  let quoted = false;
  let kept = -1;
  const end = () => {
    tags.push(kept === -1 ? tag.trim() : tag.slice(0, kept) + tag.slice(kept).trimEnd());
    tag = '';
    kept = -1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') tag += c;
      else if (text[i + 1] === '"') tag += text[++i];
      else {
        quoted = false;
        kept = tag.length;
      }
    } else if (c === '"' && kept === -1 && tag.trim() === '') {
      quoted = true;
      tag = '';
    } else if (c === ',') end();
    else tag += c;
  }
  end();
  return unique(tags);
}

/** The field's text for tags, as splitTags reads it back: a tag holding a comma or a quote, or spaces at an end, in quotes. */
export function tagsText(tags: readonly string[]): string {
  return tags.map((tag) => (/[",]|^\s|\s$/.test(tag) ? `"${tag.replaceAll('"', '""')}"` : tag)).join(', ');
}

function unique(tags: readonly string[]): string[] {
  return [...new Set(tags.filter((tag) => tag !== ''))];
}

function sortOf(text: string | null): Sort | undefined {
  return SORTS.find(([sort]) => sort === text)?.[0];
}

function pageSizeOf(text: string | null): PageSize {
  return PAGE_SIZES.find((size) => String(size) === text) ?? DEFAULT_VIEW.limit;
}

/**
 * The route a fragment names (`location.hash`, with or without its `#`). Whatever it holds gives a route:
 * an unknown section is the plants; an unknown order or page size, the default; unknown parameters are
 * ignored; a bad %-escape is read as it is written.
 */
export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const mark = text.indexOf('?');
  const name = mark === -1 ? text : text.slice(0, mark);
  const section = SECTIONS.find(([id]) => id === name)?.[0] ?? 'plants';
  if (section !== 'plants' || mark === -1) return { section, plants: DEFAULT_VIEW };
  const query = new URLSearchParams(text.slice(mark + 1));
  const sort = sortOf(query.get('sort'));
  return {
    section,
    plants: {
      q: (query.get('q') ?? '').trim(),
      tags: addressTags(query.getAll('tag')),
      sort: sort ?? DEFAULT_VIEW.sort,
      sortChosen: sort !== undefined,
      limit: pageSizeOf(query.get('limit')),
    },
  };
}

/**
 * The fragment of a route, `#` included: the plants view's query in a fixed order, its defaults left out
 * (an order chosen is kept, though it is the default one).
 */
export function routeHash(route: Route): string {
  if (route.section !== 'plants') return `#${route.section}`;
  const { q, tags, sort, sortChosen, limit } = route.plants;
  const query = new URLSearchParams();
  if (q !== '') query.set('q', q);
  for (const tag of tags) query.append('tag', tag);
  if (sortChosen || sort !== DEFAULT_VIEW.sort) query.set('sort', sort);
  if (limit !== DEFAULT_VIEW.limit) query.set('limit', String(limit));
  const search = query.toString();
  return search === '' ? '#plants' : `#plants?${search}`;
}

/** The columns the table sorts by when their header is clicked. */
export type SortColumn = 'id' | 'name';

/** A column header's aria-sort under an order. */
export function sortState(sort: Sort, column: SortColumn): 'ascending' | 'descending' | 'none' {
  if (sort === column) return 'ascending';
  return sort === `-${column}` ? 'descending' : 'none';
}

/**
 * The order after a click on a column's header: ascending by it, or descending when it was chosen
 * ascending already (the default order, by id, is not chosen: a first click on Id sorts ascending).
 */
export function clickedSort({ sort, sortChosen }: Pick<PlantsView, 'sort' | 'sortChosen'>, column: SortColumn): Sort {
  return sortChosen && sort === column ? `-${column}` : column;
}
