import { useState } from 'preact/hooks';
import { explain, unreachable, type Client, type StoredPlant } from '../api.js';
import { ConfirmOrCancel, Dialog, Message } from '../ui.js';
import { select, type Selected } from './bulk-delete.js';

/**
 * "Delete": asks once, naming the plant, then deletes it at the version the dialog named (If-Match), as
 * Delete selected does: its version is read as the dialog opens (the row may be older) and compared with
 * the row. A plant someone else changed meanwhile is not deleted: the dialog says so, names it as it is
 * now, and Delete then deletes that version, if the person still wants to.
 */

/**
 * A plant in words: its name, and its tag in brackets if it has one, each isolated (<bdi>): a name holding
 * a bidi control (U+202E) or written right to left reordered the sentence around it.
 */
function Named({ plant }: { plant: StoredPlant }) {
  return (
    <>
      <bdi>{plant.name}</bdi>
      {plant.tag !== undefined && (
        <>
          {' ('}
          <bdi>{plant.tag}</bdi>)
        </>
      )}
    </>
  );
}

export function DeletePlant({
  client,
  plant,
  onClose,
  onDeleted,
}: {
  client: Client;
  plant: StoredPlant;
  onClose: () => void;
  onDeleted: (message: string) => void;
}) {
  // The plant the dialog names (the row's, or what it became after a conflict), its version being read.
  const [target, setTarget] = useState<Selected>(() => select(client, plant));
  const [problem, setProblem] = useState('');
  // The plant as the dialog named it and as it is now, when someone else changed it meanwhile.
  const [change, setChange] = useState<{ was: StoredPlant; now: StoredPlant } | null>(null);
  const [busy, setBusy] = useState(false);
  const id = String(plant.id);
  const gone = () => setProblem(`Plant ${id} was deleted already.`);
  /** The plant changed since the dialog named it: nothing deleted; name it as it is now, and its version the next Delete's. */
  const changed = (stored: StoredPlant, etag: string) => {
    setProblem('');
    setChange({ was: target.plant, now: stored });
    setTarget({ plant: stored, version: Promise.resolve({ etag, asShown: true, stored }) });
  };
  const remove = async () => {
    setBusy(true);
    setChange(null);
    try {
      const read = await target.version;
      if ('gone' in read) return gone();
      if ('problem' in read) {
        setProblem(read.problem);
        // Read again for the next try: a failed read is not a version.
        return setTarget(select(client, target.plant));
      }
      if (!read.asShown) return changed(read.stored, read.etag);
      const path = { id: plant.id };
      const { error } = await client.DELETE('/plants/{id}', { params: { path, header: { 'if-match': read.etag } } });
      if (error === undefined) return onDeleted(`Deleted plant ${id}.`);
      if (error.code === 'not_found') return gone();
      if (error.code !== 'precondition_failed') return setProblem(explain(error));
      // Not at that version: changed or gone (If-Match fails on both). Which one, and what it is now.
      const now = await select(client, target.plant).version;
      if ('gone' in now) return gone();
      if ('problem' in now) return setProblem(now.problem);
      changed(now.stored, now.etag);
    } catch (error) {
      setProblem(unreachable(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Delete plant ${id}?`} onClose={onClose}>
      <p>
        <Named plant={target.plant} /> will be deleted. This cannot be undone.
      </p>
      <Message text={problem} error />
      {change !== null && (
        <p role="alert" class="message error">
          Plant {id} was changed by someone else since it was shown, so it was left as it is: it was <Named plant={change.was} />, it is now{' '}
          <Named plant={change.now} />. Delete deletes it as it is now.
        </p>
      )}
      <ConfirmOrCancel action="Delete" busy={busy} onConfirm={() => void remove()} onCancel={onClose} />
    </Dialog>
  );
}
