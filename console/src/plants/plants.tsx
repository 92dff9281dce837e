import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { explain, hasScope, lacking, nextLink, unreachable, type StoredPlant } from '../api.js';
import { PAGE_SIZES, routeHash, type PageSize, type PlantsView } from '../route.js';
import type { Session } from '../session.js';
import { useShortcuts } from '../shortcuts.js';
import { counted, DoneMessage, FocusableButton, Message, type Done } from '../ui.js';
import { DeleteSelected, Failures, select, type Failure, type Selected } from './bulk-delete.js';
import { DeletePlant } from './delete.js';
import { filterQuery } from './filter.js';
import { Filters } from './filters.js';
import { PlantForm } from './form.js';
import { PlantTable } from './table.js';
import { Export, Import } from './transfer.js';

/** The feed's writes reload the page once they pause this long, and at least this often while they go on. */
const RELOAD_PAUSE_MS = 150;
const RELOAD_AT_LEAST_MS = 1000;

/**
 * The plants: a table of one page (id, name, tag), found by name (the API's q) and tag, in an order, paged by
 * the Link headers the API sends; new plants, edits and deletes in dialogs, and deletes of the plants
 * selected; import and export. The view (search, tags, order, page size) is the address's (`view`, changed
 * with `onView`: route.ts); the page within it is not, nor the selection. It reloads its page as the change feed reports writes
 * (`received` counts them), so others' plants appear by themselves. Keys: `/` focuses Search, `n` opens New plant.
 */

type Editing =
  | { kind: 'new' }
  | { kind: 'edit'; plant: StoredPlant }
  | { kind: 'delete'; plant: StoredPlant }
  | { kind: 'delete-selected'; selected: Selected[] }
  | null;

interface Page {
  plants: StoredPlant[];
  next: string | undefined;
  total: string | null;
  /** The view and cursor it was read for: until the page asked for now has come, Next page waits for it. */
  view: PlantsView;
  cursor: string | undefined;
}

/**
 * How many pages one load reads at most to fill the table. The API may answer a page short, even empty,
 * with a Link to go on: on SQLite a search of one or two letters examines at most 100,000 plants a page
 * (docs/finding-plants.md), so "pa" over a large catalogue sorted by name can come back empty while
 * thousands of names after hold it. The console follows such pages until the table is full or the list
 * ends, and says so when this many left it empty (Next page searches on).
 */
const PAGES_A_LOAD = 10;

export function Plants({
  session,
  received,
  view,
  onView,
}: {
  session: Session;
  received: number;
  view: PlantsView;
  onView: (change: Partial<PlantsView>) => void;
}) {
  const { client, info } = session;
  // The cursors of the pages before this one, and this one's (undefined: the first page). A new view starts at its first.
  const [paging, setPaging] = useState<{ view: PlantsView; cursors: Array<string | undefined> }>({ view, cursors: [undefined] });
  const cursors = paging.view === view ? paging.cursors : [undefined];
  const setCursors = (next: Array<string | undefined>) => setPaging({ view, cursors: next });
  const cursor = cursors[cursors.length - 1];
  const [page, setPage] = useState<Page | null>(null);
  const [problem, setProblem] = useState('');
  const [editing, setEditing] = useState<Editing>(null);
  const [done, setDone] = useState<Done>({ text: '', focus: false });
  const [failures, setFailures] = useState<Failure[]>([]);
  // The plants selected for "Delete selected", by id; cleared when the page shown is another.
  const [selected, setSelected] = useState<ReadonlyMap<string, Selected>>(new Map());
  const loads = useRef(0);
  const searchField = useRef<HTMLInputElement>(null);
  const canRead = hasScope(info, 'plants:read');
  const canWrite = hasScope(info, 'plants:write');

  const load = useCallback(async () => {
    if (!canRead) return;
    const mine = ++loads.current;
    // A load that failed shows its error and no page of another view or page than the one asked for: their
    // plants, count and buttons under a search that names another would pass for its answer. The page of
    // this very view and cursor stays (a reload the feed asked for that met a 429 or 503).
    const failed = (problem: string) => {
      setProblem(problem);
      setPage((shown) => (shown !== null && shown.view === view && shown.cursor === cursor ? shown : null));
    };
    try {
      const plants: StoredPlant[] = [];
      let next = cursor;
      let total: string | null = null;
      for (let read = 1; ; read++) {
        // The count once, with the first page: each count reads every match again.
        const { data, error, response } = await client.GET('/plants', {
          params: {
            query: { ...filterQuery(view), limit: view.limit - plants.length, ...(next !== undefined && { cursor: next }) },
            header: read === 1 ? { prefer: 'count=exact' } : {},
          },
        });
        // An older load answering late must not overwrite a newer one.
        if (mine !== loads.current) return;
        if (error !== undefined) return failed(explain(error));
        if (read === 1) total = response.headers.get('x-total-count');
        plants.push(...data);
        next = nextLink(response);
        if (next === undefined || plants.length >= view.limit || read === PAGES_A_LOAD) break;
      }
      setProblem('');
      setPage({ plants, next, total, view, cursor });
    } catch (error) {
      if (mine === loads.current) failed(unreachable(error));
    }
  }, [client, canRead, view, cursor]);

  // The load of the latest render: a reload timed earlier must ask for the view and page shown by then.
  const latestLoad = useRef(load);
  latestLoad.current = load;
  useEffect(() => void load(), [load]);
  useEffect(() => setSelected(new Map()), [view, cursor]);
  // Writes reported by the feed: reload the page once they pause for a moment, not once per event, and at
  // least once a second while they keep coming (waiting for a pause, a busy store's page never changed).
  const changedSince = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (received === 0) return;
    const now = Date.now();
    changedSince.current ??= now;
    const wait = Math.max(0, Math.min(RELOAD_PAUSE_MS, changedSince.current + RELOAD_AT_LEAST_MS - now));
    const timer = setTimeout(() => {
      changedSince.current = undefined;
      void latestLoad.current();
    }, wait);
    return () => clearTimeout(timer);
  }, [received]);

  useShortcuts({
    '/': () => searchField.current?.focus(),
    n: () => {
      if (canWrite) setEditing({ kind: 'new' });
    },
  });

  if (!canRead) return <p class="unavailable">{lacking('plants:read', 'Reading plants')}</p>;

  // Search again with the same view (no new address): the first page, read anew.
  const search = (change: Partial<PlantsView>) => {
    if (routeHash({ section: 'plants', plants: { ...view, ...change } }) !== routeHash({ section: 'plants', plants: view })) onView(change);
    else if (cursors.length > 1) setCursors([undefined]);
    else void load();
  };
  // After a delete, the message takes the focus: the control pressed is gone (the row) or disabled (Delete selected).
  const finish = (message: string, deleted = false) => {
    setEditing(null);
    setFailures([]);
    setDone({ text: message, focus: deleted });
    void load();
  };
  // The next page's cursor once the page asked for has come (a page shown while another loads has its own).
  const nextPage = page !== null && page.view === view && page.cursor === cursor ? page.next : undefined;
  const choose = (plants: StoredPlant[], on: boolean) => {
    const next = new Map(selected);
    for (const plant of plants) {
      const id = String(plant.id);
      if (!on) next.delete(id);
      else if (!next.has(id)) next.set(id, select(client, plant));
    }
    setSelected(next);
  };

  // The page shown and its count; beside a failed load's error, nothing (its page is not shown).
  let pagerStatus = problem === '' ? 'Loading…' : '';
  if (page !== null) pagerStatus = `Page ${cursors.length}${page.total === null ? '' : ` · ${counted(Number(page.total), 'plant')} found`}`;

  return (
    <>
      <Filters view={view} onSearch={search} onSort={(sort) => onView({ sort, sortChosen: true })} searchRef={searchField} />

      <div class="actions">
        <button type="button" disabled={!canWrite} aria-keyshortcuts="n" onClick={() => setEditing({ kind: 'new' })}>
          New plant
        </button>
        <Export client={client} filter={view} />
        {canWrite && (
          <>
            <button
              type="button"
              class="danger"
              disabled={selected.size === 0}
              onClick={() => setEditing({ kind: 'delete-selected', selected: [...selected.values()] })}
            >
              Delete selected
            </button>
            <span class="hint">
              {selected.size === 0 ? 'Select plants to delete several at once.' : `${counted(selected.size, 'plant')} selected.`}
            </span>
          </>
        )}
      </div>
      {!canWrite && <p class="unavailable">{lacking('plants:write', 'Adding, editing, deleting and importing plants')}</p>}
      <DoneMessage done={done} />
      <Failures failures={failures} />
      <Message text={problem} error />

      {page !== null && (
        <PlantTable
          plants={page.plants}
          more={page.next !== undefined}
          view={view}
          onSort={(sort) => onView({ sort, sortChosen: true })}
          canWrite={canWrite}
          selected={new Set(selected.keys())}
          onSelect={choose}
          onEdit={(plant) => setEditing({ kind: 'edit', plant })}
          onDelete={(plant) => setEditing({ kind: 'delete', plant })}
        />
      )}
      <nav class="pager" aria-label="Pages">
        <FocusableButton unavailable={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </FocusableButton>
        <span role="status">{pagerStatus}</span>
        <FocusableButton unavailable={nextPage === undefined} onClick={() => setCursors([...cursors, nextPage])}>
          Next page
        </FocusableButton>
        <label for="plant-limit">Page size</label>
        <select id="plant-limit" value={view.limit} onChange={(e) => onView({ limit: Number(e.currentTarget.value) as PageSize })}>
          {PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </nav>

      {canWrite && <Import client={client} onImported={() => void load()} />}

      {editing?.kind === 'new' && <PlantForm client={client} onClose={() => setEditing(null)} onSaved={finish} />}
      {editing?.kind === 'edit' && <PlantForm client={client} plant={editing.plant} onClose={() => setEditing(null)} onSaved={finish} />}
      {editing?.kind === 'delete' && (
        <DeletePlant client={client} plant={editing.plant} onClose={() => setEditing(null)} onDeleted={(message) => finish(message, true)} />
      )}
      {editing?.kind === 'delete-selected' && (
        <DeleteSelected
          client={client}
          selected={editing.selected}
          onClose={() => setEditing(null)}
          onDone={(deleted, failed) => {
            finish(
              failed.length === 0 ? `Deleted ${counted(deleted, 'plant')}.` : `Deleted ${deleted} of ${counted(editing.selected.length, 'plant')}.`,
              true,
            );
            setFailures(failed);
            setSelected(new Map());
          }}
        />
      )}
    </>
  );
}
