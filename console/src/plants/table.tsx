import { useLayoutEffect, useRef } from 'preact/hooks';
import type { StoredPlant } from '../api.js';
import { clickedSort, sortState, type PlantsView, type Sort, type SortColumn } from '../route.js';
import { Hidden, TableBox } from '../ui.js';

/**
 * The plants of one page: id, name, tag. The Id and Name headers are buttons that sort by their column
 * (ascending, then descending on a second click), each header telling its order by aria-sort. With
 * plants:write, each row has a box to select it for "Delete selected", the header a box for the whole page,
 * and Edit and Delete buttons.
 */
export interface PlantTableProps {
  plants: StoredPlant[];
  /** Whether a next page follows (an empty page with one: the search has not looked through every plant yet). */
  more: boolean;
  view: Pick<PlantsView, 'sort' | 'sortChosen'>;
  onSort: (sort: Sort) => void;
  canWrite: boolean;
  /** The ids (as text) selected for deleting. */
  selected: ReadonlySet<string>;
  onSelect: (plants: StoredPlant[], on: boolean) => void;
  onEdit: (plant: StoredPlant) => void;
  onDelete: (plant: StoredPlant) => void;
}

export function PlantTable(props: PlantTableProps) {
  const { plants, more, view, onSort, canWrite, selected } = props;
  const { sort } = view;
  if (plants.length === 0) {
    return (
      <p>{more ? 'No plants found yet: a short search looks through the plants a part at a time. Next page searches on.' : 'No plants found.'}</p>
    );
  }
  const header = (column: SortColumn, label: string) => (
    <th scope="col" aria-sort={sortState(sort, column)}>
      <button type="button" class="sort" onClick={() => onSort(clickedSort(view, column))}>
        {label}
        <span class="arrow" aria-hidden="true">
          {{ ascending: ' ▲', descending: ' ▼', none: '' }[sortState(sort, column)]}
        </span>
      </button>
    </th>
  );
  return (
    <TableBox label="Plants table">
      <table>
        <caption class="visually-hidden">Plants</caption>
        <thead>
          <tr>
            {canWrite && (
              <th scope="col" class="select">
                <SelectPage plants={plants} selected={selected} onSelect={props.onSelect} />
              </th>
            )}
            {header('id', 'Id')}
            {header('name', 'Name')}
            <th scope="col">Tag</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {plants.map((plant) => {
            const id = String(plant.id);
            return (
              <tr key={id} class={selected.has(id) ? 'selected' : undefined}>
                {canWrite && (
                  <td class="select">
                    <input
                      type="checkbox"
                      aria-label={`Select ${plant.name}`}
                      checked={selected.has(id)}
                      onChange={(event) => props.onSelect([plant], event.currentTarget.checked)}
                    />
                  </td>
                )}
                <td class="id">{id}</td>
                <td class="text">{plant.name}</td>
                <td class="text">{plant.tag ?? ''}</td>
                {canWrite && (
                  <td class="row-actions">
                    <button type="button" class="quiet" onClick={() => props.onEdit(plant)}>
                      Edit<Hidden> plant {id}</Hidden>
                    </button>
                    <button type="button" class="quiet danger" onClick={() => props.onDelete(plant)}>
                      Delete<Hidden> plant {id}</Hidden>
                    </button>
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableBox>
  );
}

/** The box for the whole page: checked when every row is selected, mixed when some are; a click selects all or none. */
function SelectPage({ plants, selected, onSelect }: Pick<PlantTableProps, 'plants' | 'selected' | 'onSelect'>) {
  const count = plants.filter((plant) => selected.has(String(plant.id))).length;
  const all = count === plants.length;
  const ref = useRef<HTMLInputElement>(null);
  // "Mixed" exists only as a property of the element, not as an attribute: set with the render that changes
  // the count (a layout effect), never a frame later, when the box has shown unchecked already.
  useLayoutEffect(() => {
    ref.current!.indeterminate = count > 0 && !all;
  }, [count, all]);
  return (
    <input
      ref={ref}
      type="checkbox"
      aria-label="Select all on this page"
      checked={all}
      onChange={(event) => onSelect(plants, event.currentTarget.checked)}
    />
  );
}
