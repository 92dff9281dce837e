import { useEffect, useRef, useState } from 'preact/hooks';
import { explain, parseId, unreachable, type Client, type Id, type StoredPlant } from '../api.js';
import { Submissions } from '../submissions.js';
import { ConfirmOrCancel, Dialog, Field, Message } from '../ui.js';
import { useUnsaved } from '../unsaved.js';
import { changesOf, ConflictView, versionOf, type Conflict, type Patch, type Stored, type Version } from './conflict.js';

/**
 * "New plant" and "Edit": one form, fields Id, Name and Tag, button Save. A new plant is created only if its
 * id is free (If-None-Match: *), never replacing another by mistake. An edit is sent with If-Match, the
 * version read when the form opened: if the plant changed meanwhile (412), both versions are shown side by
 * side, to keep the user's or take the stored one. Keeping the user's applies only the fields the user
 * changed, as a merge patch over the stored version (If-Match its ETag): the form as a whole would undo the
 * other person's change to a field this user never touched.
 */

/**
 * The tag to save from the Tag field: the tag the form opened with, as it was, while the field still shows
 * it (the field cannot tell an empty tag, or one of spaces, from none); else what was typed, none if blank.
 */
function tagToSave(field: string, opened: string | undefined): string | undefined {
  if (field === (opened ?? '')) return opened;
  return field.trim() === '' ? undefined : field;
}

/** The plant as stored now (GET /plants/{id}), for its ETag and for the comparison. */
async function readStored(client: Client, plantId: Id): Promise<Stored | string> {
  const { data, error, response } = await client.GET('/plants/{id}', { params: { path: { id: plantId } } });
  if (error !== undefined) return error.code === 'not_found' ? null : explain(error);
  return { version: versionOf(data), etag: response.headers.get('etag') ?? '*' };
}

export function PlantForm({
  client,
  plant,
  onClose,
  onSaved,
}: {
  client: Client;
  plant?: StoredPlant;
  onClose: () => void;
  onSaved: (message: string) => void;
}) {
  const editing = plant !== undefined;
  const [id, setId] = useState(editing ? String(plant.id) : '');
  const [name, setName] = useState(plant?.name ?? '');
  const [tag, setTag] = useState(plant?.tag ?? '');
  // The tag as stored when the form opened (the row's until the stored plant is read).
  const [openedTag, setOpenedTag] = useState(plant?.tag);
  // The name as stored when the form opened: with openedTag, the version a conflict tells each side's changes from.
  const [openedName, setOpenedName] = useState(plant?.name);
  // The ETag of the version read as the form opened; null: the plant is gone (Save makes it again, If-None-Match: *);
  // undefined: not read (the read failed), so Save reads it first.
  const [etag, setEtag] = useState<string | null | undefined>(editing ? undefined : null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(editing);
  // A new plant's Idempotency-Key, the same for a retry of a Save whose answer was lost: sent again without it,
  // the plant the first Save had made was told as another's ("exists already: edit that one instead").
  const submissions = useRef(new Submissions());

  // An edit starts from the plant as stored now: the table's row may be older than its ETag.
  const editedId = plant?.id;
  useEffect(() => {
    if (editedId === undefined) return;
    void readStored(client, editedId)
      .then(
        (stored) => {
          if (typeof stored === 'string') setProblem(stored);
          else if (stored === null) {
            setProblem(`Plant ${String(editedId)} was deleted meanwhile; Save creates it again.`);
            setEtag(null);
          } else {
            setName(stored.version.name);
            setTag(stored.version.tag ?? '');
            setOpenedTag(stored.version.tag);
            setOpenedName(stored.version.name);
            setEtag(stored.etag);
          }
        },
        (error: unknown) => setProblem(unreachable(error)),
      )
      .finally(() => setBusy(false));
  }, [client, editedId]);

  /** Sends `mine`: over the version `over` names (an ETag), or only if no plant has the id (null). */
  const send = async (mine: Version, over: string | null) => {
    setBusy(true);
    setProblem('');
    try {
      const plantId = editing ? plant.id : parseId(id);
      const body = { name: mine.name, ...(mine.tag !== undefined && { tag: mine.tag }) };
      const header = over === null ? { 'if-none-match': '*' } : { 'if-match': over };
      const { error, response } = editing
        ? await client.PUT('/plants/{id}', { params: { path: { id: plantId }, header }, body })
        : await client.POST('/plants', {
            params: {
              header: { 'if-none-match': '*', 'idempotency-key': submissions.current.keyFor(JSON.stringify({ id: String(plantId), ...body })) },
            },
            body: { id: plantId, ...body },
          });
      submissions.current.ended({ answered: true, status: response.status, code: error?.code });
      if (error === undefined) return onSaved(`${editing ? 'Saved' : 'Created'} plant ${String(plantId)}.`);
      if (error.code === 'plant_exists' && !editing) return setProblem(`A plant with id ${String(plantId)} exists already: edit that one instead.`);
      // Changed meanwhile (If-Match), or made meanwhile by someone else (If-None-Match: *): show theirs beside mine.
      if (error.code === 'precondition_failed' || error.code === 'plant_exists') return await showConflict(plantId, mine);
      setProblem(explain(error));
    } catch (error) {
      submissions.current.ended({ answered: false });
      setProblem(
        `${unreachable(error)} ${editing ? 'It may have been saved' : 'The plant may have been created'} all the same: Save again to find out.`,
      );
    } finally {
      setBusy(false);
    }
  };

  /**
   * Save when the version the form opened on could not be read (a 503, no answer): it is read now. As the
   * form showed it (the row's), it is saved over at its ETag; changed or deleted since, the two are compared.
   * Sent with no version at all (If-None-Match: *, as for a deleted plant), it was refused (412) and shown
   * as changed by someone else when no one had changed it.
   */
  const saveUnread = async (mine: Version, plantId: Id) => {
    setBusy(true);
    setProblem('');
    try {
      const stored = await readStored(client, plantId);
      if (typeof stored === 'string') return setProblem(stored);
      const opened = { name: openedName ?? '', tag: openedTag };
      if (stored !== null && stored.version.name === opened.name && stored.version.tag === opened.tag) return await send(mine, stored.etag);
      setConflict({ mine, stored, opened });
    } catch (error) {
      setProblem(unreachable(error));
    } finally {
      setBusy(false);
    }
  };

  /** The stored version read again and shown beside `mine`. */
  const showConflict = async (plantId: Id, mine: Version) => {
    const stored = await readStored(client, plantId);
    if (typeof stored === 'string') return setProblem(stored);
    // Stored as this user saves it: their own earlier Save, whose answer was lost, made it so (a PUT takes no
    // Idempotency-Key). Nothing to compare: a conflict said someone else had changed it.
    if (stored !== null && stored.version.name === mine.name && stored.version.tag === mine.tag) return onSaved(`Saved plant ${String(plantId)}.`);
    setConflict({ mine, stored, ...(editing && openedName !== undefined && { opened: { name: openedName, tag: openedTag } }) });
  };

  /**
   * Keep mine: this user's changes alone (a merge patch) over the stored version, at its ETag; changed again
   * meanwhile (412) or deleted (404), the comparison is shown again, against the version stored then.
   */
  const merge = async (mine: Version, patch: Patch, over: string, plantId: Id) => {
    setBusy(true);
    setProblem('');
    try {
      const { error } = await client.PATCH('/plants/{id}', { params: { path: { id: plantId }, header: { 'if-match': over } }, body: patch });
      if (error === undefined) return onSaved(`Saved plant ${String(plantId)}.`);
      if (error.code === 'precondition_failed' || error.code === 'not_found') return await showConflict(plantId, mine);
      setProblem(explain(error));
    } catch (error) {
      setProblem(unreachable(error));
    } finally {
      setBusy(false);
    }
  };

  // What was typed, not yet saved: a new plant's fields, an edit's that differ from the plant as it opened, or
  // the user's version beside a conflict. Saved or cancelled, the form closes, and nothing is held.
  useUnsaved(conflict !== null || (editing ? name !== (openedName ?? '') || tag !== (openedTag ?? '') : id + name + tag !== ''));

  const title = editing ? `Edit plant ${String(plant.id)}` : 'New plant';
  if (conflict !== null) {
    return (
      <Dialog title={title} onClose={onClose}>
        <ConflictView
          conflict={conflict}
          busy={busy}
          onKeepMine={() => {
            const { mine, stored, opened } = conflict;
            setConflict(null);
            // Deleted meanwhile (or no version to tell changes from): nothing to merge into, mine made again whole.
            if (stored === null || opened === undefined) void send(mine, stored?.etag ?? null);
            else void merge(mine, changesOf(mine, opened), stored.etag, editing ? plant.id : parseId(id));
          }}
          onTakeStored={() =>
            onSaved(conflict.stored === null ? 'Nothing saved: the plant stays deleted.' : `Kept the stored version of plant ${id}.`)
          }
        />
        <Message text={problem} error />
      </Dialog>
    );
  }
  return (
    <Dialog title={title} onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const mine = { name, tag: tagToSave(tag, openedTag) };
          if (editing && etag === undefined) void saveUnread(mine, plant.id);
          else void send(mine, etag ?? null);
        }}
      >
        <Field
          label="Id"
          value={id}
          onInput={setId}
          required
          readOnly={editing}
          inputMode="numeric"
          hint="A whole number (64-bit); it never changes."
        />
        <Field label="Name" value={name} onInput={setName} required />
        <Field label="Tag" value={tag} onInput={setTag} hint="Optional." />
        <Message text={problem} error />
        <ConfirmOrCancel busy={busy} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
