import { useState } from 'preact/hooks';
import { explain, unreachable, type Client, type StoredPlant } from '../api.js';
import { ConfirmOrCancel, Dialog, Message } from '../ui.js';

/** "Delete": asks once, naming the plant, then deletes it. */
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
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const id = String(plant.id);
  const remove = async () => {
    setBusy(true);
    try {
      const { error } = await client.DELETE('/plants/{id}', { params: { path: { id: plant.id } } });
      if (error === undefined) return onDeleted(`Deleted plant ${id}.`);
      setProblem(error.code === 'not_found' ? `Plant ${id} was deleted already.` : explain(error));
    } catch (error) {
      setProblem(unreachable(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Delete plant ${id}?`} onClose={onClose}>
      <p>
        {plant.name}
        {plant.tag === undefined ? '' : ` (${plant.tag})`} will be deleted. This cannot be undone.
      </p>
      <Message text={problem} error />
      <ConfirmOrCancel action="Delete" busy={busy} onConfirm={() => void remove()} onCancel={onClose} />
    </Dialog>
  );
}
