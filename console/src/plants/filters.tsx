import type { RefObject } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { SORTS, splitTags, tagsText, type PlantsView, type Sort } from '../route.js';

/**
 * The search form: Search (the API's q, part of a name in any case), With tag (one or several, any of them),
 * and Sort by, the same order the Id and Name headers set. The fields show the view in the address, and
 * show it again when it changes (Back, a link); what is typed counts once submitted.
 */
export function Filters({
  view,
  onSearch,
  onSort,
  searchRef,
}: {
  view: PlantsView;
  /** The search submitted: its text and tags (the same as shown, to search again). */
  onSearch: (next: Pick<PlantsView, 'q' | 'tags'>) => void;
  onSort: (sort: Sort) => void;
  searchRef: RefObject<HTMLInputElement | null>;
}) {
  const shownTags = tagsText(view.tags);
  const [search, setSearch] = useState(view.q);
  const [tagText, setTagText] = useState(shownTags);
  useEffect(() => setSearch(view.q), [view.q]);
  useEffect(() => setTagText(shownTags), [shownTags]);
  return (
    <form
      role="search"
      class="filters"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch({ q: search.trim(), tags: splitTags(tagText) });
      }}
    >
      <div class="field">
        <label for="plant-search">Search</label>
        <input
          id="plant-search"
          ref={searchRef}
          type="search"
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
          aria-describedby="search-hint"
          aria-keyshortcuts="/"
        />
        <small id="search-hint" class="hint">
          Part of a name, in any case.
        </small>
      </div>
      <div class="field">
        <label for="plant-tags">With tag</label>
        <input id="plant-tags" value={tagText} onInput={(e) => setTagText(e.currentTarget.value)} aria-describedby="tags-hint" />
        <small id="tags-hint" class="hint">
          One tag, or several separated by commas (any of them); a tag that holds a comma in double quotes: "red, white".
        </small>
      </div>
      <button type="submit">Search</button>
      <div class="field">
        <label for="plant-sort">Sort by</label>
        <select id="plant-sort" value={view.sort} onChange={(e) => onSort(e.currentTarget.value as Sort)}>
          {SORTS.map(([value, words]) => (
            <option key={value} value={value}>
              {words}
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}
