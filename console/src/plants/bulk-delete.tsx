import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { explain, unreachable, type Client, type StoredPlant } from '../api.js';
import { ConfirmOrCancel, counted, Dialog } from '../ui.js';

/**
 * "Delete selected": the plants whose boxes are checked, deleted one by one after asking, each only at the
 * version it was selected at (If-Match), so that a plant someone else changed meanwhile is left as it is.
 * The list (GET /plants) carries no versions, so a plant's version is read when its box is checked
 * (GET /plants/{id}, its ETag), and checked against the row as it was shown: a plant changed between the
 * list's read and the click is not deleted either. What could not be deleted is listed with the reason.
 */

/**
 * What GET /plants/{id} said when the plant was selected: its version, whether it was still as its row showed
 * it, and the plant as stored (for a single Delete to show what it has become); or why not.
 */
type SelectedVersion = { etag: string; asShown: boolean; stored: StoredPlant } | { gone: true } | { problem: string };

/** A plant selected for deleting: as its row showed it, and its version, read when it was selected. */
export interface Selected {
  plant: StoredPlant;
  version: Promise<SelectedVersion>;
}

/** A plant that was not deleted, and why, in words. */
export interface Failure {
  plant: StoredPlant;
  reason: string;
}

const CHANGED = 'changed meanwhile (by someone else, since it was shown), so it was left as it is';
const GONE = 'gone meanwhile (deleted by someone else)';

/** Selects a plant: starts reading its version (never rejects: a failure is its answer). */
export function select(client: Client, plant: StoredPlant): Selected {
  const read = async (): Promise<SelectedVersion> => {
    try {
      const { data, error, response } = await client.GET('/plants/{id}', { params: { path: { id: plant.id } } });
      if (error !== undefined) return error.code === 'not_found' ? { gone: true } : { problem: explain(error) };
      const etag = response.headers.get('etag');
      if (etag === null) return { problem: 'the service sent no version (ETag) of it' };
      return { etag, asShown: data.name === plant.name && data.tag === plant.tag, stored: data };
    } catch (error) {
      return { problem: unreachable(error) };
    }
  };
  return { plant, version: read() };
}

/** Deletes one selected plant at its version: undefined when deleted, or why not. */
async function remove(client: Client, { plant, version }: Selected): Promise<string | undefined> {
  const read = await version;
  if ('gone' in read) return GONE;
  if ('problem' in read) return read.problem;
  if (!read.asShown) return CHANGED;
  try {
    const path = { id: plant.id };
    const { error } = await client.DELETE('/plants/{id}', { params: { path, header: { 'if-match': read.etag } } });
    if (error === undefined) return undefined;
    if (error.code === 'not_found') return GONE;
    if (error.code !== 'precondition_failed') return explain(error);
    // Not at that version: changed, or gone (If-Match fails on both). Which one, for the list.
    const now = await client.GET('/plants/{id}', { params: { path } });
    return now.error?.code === 'not_found' ? GONE : CHANGED;
  } catch (error) {
    return unreachable(error);
  }
}

/** The dialog: how many, their names, then Delete (one by one, with progress) or Cancel. */
export function DeleteSelected({
  client,
  selected,
  onClose,
  onDone,
}: {
  client: Client;
  selected: Selected[];
  onClose: () => void;
  onDone: (deleted: number, failures: Failure[]) => void;
}) {
  const [progress, setProgress] = useState<number | null>(null);
  const count = selected.length;
  const run = async () => {
    const failures: Failure[] = [];
    for (const [index, one] of selected.entries()) {
      setProgress(index);
      const reason = await remove(client, one);
      if (reason !== undefined) failures.push({ plant: one.plant, reason });
    }
    onDone(count - failures.length, failures);
  };
  // Each name isolated (<bdi>): a bidi control in one (U+202E) reversed the names after it and the sentence.
  const names = selected.slice(0, 10).map(({ plant }, i) => (
    <Fragment key={String(plant.id)}>
      {i > 0 && ', '}
      <bdi>{plant.name}</bdi>
    </Fragment>
  ));
  const busy = progress !== null;
  return (
    // Escape does not close it while it deletes: the result would have nowhere to go.
    <Dialog title={`Delete ${counted(count, 'plant')}?`} onClose={busy ? () => undefined : onClose}>
      <p>
        {count === 1 ? 'This plant' : `These ${count} plants`} will be deleted: {names}
        {count > 10 && `, ${count - 10} more`}. This cannot be undone.
      </p>
      <p class="hint">A plant that someone else changed or deleted since it was shown is left as it is, and listed.</p>
      {busy && <p role="status">{`Deleting… ${progress + 1} of ${count}`}</p>}
      <ConfirmOrCancel action="Delete" busy={busy} onConfirm={() => void run()} onCancel={onClose} holdCancel />
    </Dialog>
  );
}

/** What a bulk delete could not do, each plant by name with the reason; nothing when it did all. */
export function Failures({ failures }: { failures: Failure[] }) {
  if (failures.length === 0) return null;
  return (
    <div role="alert" class="message error">
      <p>{failures.length === 1 ? 'One plant was not deleted:' : `${failures.length} plants were not deleted:`}</p>
      <ul>
        {failures.map(({ plant, reason }) => (
          <li key={String(plant.id)}>
            <strong>
              <bdi>{plant.name}</bdi>
            </strong>{' '}
            (plant {String(plant.id)}): {reason}.
          </li>
        ))}
      </ul>
    </div>
  );
}
