import { useEffect, useRef, useState } from 'preact/hooks';
import { explain, hasScope, lacking, nextLink, unreachable, type StoredPlant } from '../api.js';
import type { Session } from '../session.js';
import { Hidden, Message, TableBox } from '../ui.js';
import { DeletePlant } from './delete.js';
import { filterQuery, type Filter, type Sort } from './filter.js';
import { PlantForm } from './form.js';
import { Export, Import } from './transfer.js';

/**
 * The plants: a table of one page (id, name, tag), found by name (the API's q) and tag, in an order, paged by
 * the Link headers the API sends; new plants, edits and deletes in dialogs; import and export. It reloads
 * its page as the change feed reports writes (`received` counts them), so others' plants appear by themselves.
 */

const SORTS: ReadonlyArray<[Sort, string]> = [
  ['id', 'Id, ascending'],
  ['-id', 'Id, descending'],
  ['name', 'Name, A to Z'],
  ['-name', 'Name, Z to A'],
];
const PAGE_SIZES = [25, 50, 100, 250];

type Editing = { kind: 'new' } | { kind: 'edit'; plant: StoredPlant } | { kind: 'delete'; plant: StoredPlant } | null;

export function Plants({ session, received }: { session: Session; received: number }) {
  const { client, info } = session;
  const [search, setSearch] = useState('');
  const [tagText, setTagText] = useState('');
  const [filter, setFilter] = useState<Filter>({ q: '', tags: [], sort: 'id' });
  const [limit, setLimit] = useState(25);
  // The cursors of the pages before this one, and this one's (undefined: the first page).
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [page, setPage] = useState<{ plants: StoredPlant[]; next: string | undefined; total: string | null } | null>(null);
  const [problem, setProblem] = useState('');
  const [editing, setEditing] = useState<Editing>(null);
  const [done, setDone] = useState('');
  const loads = useRef(0);
  const canRead = hasScope(info, 'plants:read');
  const canWrite = hasScope(info, 'plants:write');
  const cursor = cursors[cursors.length - 1];

  const load = async () => {
    if (!canRead) return;
    const mine = ++loads.current;
    try {
      const { data, error, response } = await client.GET('/plants', {
        params: { query: { ...filterQuery(filter), limit, ...(cursor !== undefined && { cursor }) }, header: { prefer: 'count=exact' } },
      });
      // An older load answering late must not overwrite a newer one.
      if (mine !== loads.current) return;
      if (error !== undefined) {
        setProblem(explain(error));
        return;
      }
      setProblem('');
      setPage({ plants: data, next: nextLink(response, 'cursor'), total: response.headers.get('x-total-count') });
    } catch (error) {
      if (mine === loads.current) setProblem(unreachable(error));
    }
  };

  // The load of the latest render: a reload timed earlier must ask for the filter and page shown by then.
  const latestLoad = useRef(load);
  latestLoad.current = load;
  useEffect(() => void load(), [filter, limit, cursor]);
  // Writes reported by the feed: reload the page once they pause for a moment, not once per event.
  useEffect(() => {
    if (received === 0) return;
    const timer = setTimeout(() => void latestLoad.current(), 150);
    return () => clearTimeout(timer);
  }, [received]);

  if (!canRead) return <p class="unavailable">{lacking('plants:read', 'Reading plants')}</p>;

  // From the filter as it is now, not as this render saw it: a sort chosen just before a search is kept.
  const apply = (next: Partial<Filter>) => {
    setFilter((current) => ({ ...current, ...next }));
    setCursors([undefined]);
  };
  const finish = (message: string) => {
    setEditing(null);
    setDone(message);
    void load();
  };

  return (
    <>
      <form
        role="search"
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          const tags = tagText
            .split(',')
            .map((tag) => tag.trim())
            .filter((tag) => tag !== '');
          apply({ q: search.trim(), tags });
        }}
      >
        <div class="field">
          <label for="plant-search">Search</label>
          <input id="plant-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} aria-describedby="search-hint" />
          <small id="search-hint" class="hint">
            Part of a name, in any case.
          </small>
        </div>
        <div class="field">
          <label for="plant-tags">With tag</label>
          <input id="plant-tags" value={tagText} onInput={(e) => setTagText(e.currentTarget.value)} aria-describedby="tags-hint" />
          <small id="tags-hint" class="hint">
            One tag, or several separated by commas (any of them).
          </small>
        </div>
        <button type="submit">Search</button>
        <div class="field">
          <label for="plant-sort">Sort by</label>
          <select id="plant-sort" value={filter.sort} onChange={(e) => apply({ sort: e.currentTarget.value as Sort })}>
            {SORTS.map(([value, words]) => (
              <option key={value} value={value}>
                {words}
              </option>
            ))}
          </select>
        </div>
      </form>

      <div class="actions">
        <button type="button" disabled={!canWrite} onClick={() => setEditing({ kind: 'new' })}>
          New plant
        </button>
        <Export client={client} filter={filter} />
      </div>
      {!canWrite && <p class="unavailable">{lacking('plants:write', 'Adding, editing, deleting and importing plants')}</p>}
      <Message text={done} />
      <Message text={problem} error />

      {page !== null && (
        <PlantTable
          plants={page.plants}
          canWrite={canWrite}
          onEdit={(plant) => setEditing({ kind: 'edit', plant })}
          onDelete={(plant) => setEditing({ kind: 'delete', plant })}
        />
      )}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span role="status">
          {page === null ? 'Loading…' : `Page ${cursors.length}${page.total === null ? '' : ` · ${page.total} plants found`}`}
        </span>
        <button type="button" disabled={page?.next === undefined} onClick={() => setCursors([...cursors, page?.next])}>
          Next page
        </button>
        <label for="plant-limit">Per page</label>
        <select
          id="plant-limit"
          value={limit}
          onChange={(e) => {
            setLimit(Number(e.currentTarget.value));
            setCursors([undefined]);
          }}
        >
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
      {editing?.kind === 'delete' && <DeletePlant client={client} plant={editing.plant} onClose={() => setEditing(null)} onDeleted={finish} />}
    </>
  );
}

function PlantTable(props: { plants: StoredPlant[]; canWrite: boolean; onEdit: (p: StoredPlant) => void; onDelete: (p: StoredPlant) => void }) {
  if (props.plants.length === 0) return <p>No plants found.</p>;
  return (
    <TableBox label="Plants table">
      <table>
        <caption class="visually-hidden">Plants</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Name</th>
            <th scope="col">Tag</th>
            {props.canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {props.plants.map((plant) => (
            <tr key={String(plant.id)}>
              <td class="id">{String(plant.id)}</td>
              <td>{plant.name}</td>
              <td>{plant.tag ?? ''}</td>
              {props.canWrite && (
                <td class="row-actions">
                  <button type="button" class="quiet" onClick={() => props.onEdit(plant)}>
                    Edit<Hidden> plant {String(plant.id)}</Hidden>
                  </button>
                  <button type="button" class="quiet danger" onClick={() => props.onDelete(plant)}>
                    Delete<Hidden> plant {String(plant.id)}</Hidden>
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
