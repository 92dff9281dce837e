import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { explain, parseId, unreachable, type Client, type Id, type StoredPlant } from '../api.js';
import { ConfirmOrCancel, Dialog, Field, FocusableButton, Message } from '../ui.js';

/**
 * "New plant" and "Edit": one form, fields Id, Name and Tag, button Save. A new plant is created only if its
 * id is free (If-None-Match: *), never replacing another by mistake. An edit is sent with If-Match, the
 * version read when the form opened: if the plant changed meanwhile (412), both versions are shown side by
 * side, to keep the user's or take the stored one. Keeping the user's applies only the fields the user
 * changed, as a merge patch over the stored version (If-Match its ETag): the form as a whole would undo the
 * other person's change to a field this user never touched.
 */

/** A plant's fields as saved: no tag (undefined) is not the empty tag (""), which the API keeps apart. */
interface Version {
  name: string;
  tag: string | undefined;
}

/** The plant as stored now, with its ETag; null when it is gone. */
type Stored = { version: Version; etag: string } | null;

/** Mine and the stored version; `opened`, the version the edit started from (none for a new plant): which side changed what. */
type Conflict = { mine: Version; stored: Stored; opened?: Version };

/** A JSON merge patch of a plant: a field left out stays as stored, `tag: null` removes the tag. */
type Patch = { name?: string; tag?: string | null };

/** The fields this user changed from the version the edit started from, as a merge patch. */
function changesOf(mine: Version, opened: Version): Patch {
  return {
    ...(mine.name !== opened.name && { name: mine.name }),
    ...(mine.tag !== opened.tag && { tag: mine.tag ?? null }),
  };
}

/** The fields a patch names, in words ("name and tag"). */
function fieldsOf(patch: Patch): string {
  return Object.keys(patch).join(' and ');
}

function versionOf(plant: Pick<StoredPlant, 'name' | 'tag'>): Version {
  return { name: plant.name, tag: plant.tag };
}

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
  const [etag, setEtag] = useState<string | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(editing);

  // An edit starts from the plant as stored now: the table's row may be older than its ETag.
  const editedId = plant?.id;
  useEffect(() => {
    if (editedId === undefined) return;
    void readStored(client, editedId)
      .then(
        (stored) => {
          if (typeof stored === 'string') setProblem(stored);
          else if (stored === null) setProblem(`Plant ${String(editedId)} was deleted meanwhile; Save creates it again.`);
          else {
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
      const { error } = editing
        ? await client.PUT('/plants/{id}', { params: { path: { id: plantId }, header }, body })
        : await client.POST('/plants', { params: { header: { 'if-none-match': '*' } }, body: { id: plantId, ...body } });
      if (error === undefined) return onSaved(`${editing ? 'Saved' : 'Created'} plant ${String(plantId)}.`);
      if (error.code === 'plant_exists' && !editing) return setProblem(`A plant with id ${String(plantId)} exists already: edit that one instead.`);
      // Changed meanwhile (If-Match), or made meanwhile by someone else (If-None-Match: *): show theirs beside mine.
      if (error.code === 'precondition_failed' || error.code === 'plant_exists') return await showConflict(plantId, mine);
      setProblem(explain(error));
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
          void send({ name, tag: tagToSave(tag, openedTag) }, editing ? etag : null);
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

function ConflictView({
  conflict,
  busy,
  onKeepMine,
  onTakeStored,
}: {
  conflict: Conflict;
  busy: boolean;
  onKeepMine: () => void;
  onTakeStored: () => void;
}) {
  const { mine, stored, opened } = conflict;
  const differs = (field: keyof Version) => stored !== null && stored.version[field] !== mine[field];
  /**
   * A difference said in words, not by bold and underline alone (a screen reader showed two lists with
   * nothing marked), and by whom, where the version the edit started from tells it.
   */
  const mark = (field: keyof Version, side: Version) => {
    if (!differs(field)) return null;
    const who = opened === undefined || side[field] === opened[field] ? '' : side === mine ? ': changed by you' : ': changed by someone else';
    return <span class="change-note"> (differs{who})</span>;
  };
  // The focus on what happened as the comparison replaces the form: Save, which had it, is gone, and the
  // focus was on nothing in the modal dialog.
  const said = useRef<HTMLParagraphElement>(null);
  useLayoutEffect(() => said.current?.focus(), []);
  return (
    <>
      <p role="alert" ref={said} tabIndex={-1}>
        {stored === null
          ? 'This plant was deleted while you edited it.'
          : 'This plant was changed by someone else while you edited it. Compare the two versions and choose one.'}
      </p>
      <div class="compare">
        <section aria-labelledby="conflict-mine" class="card">
          <h3 id="conflict-mine">Your version</h3>
          <dl class="facts">
            <dt>Name</dt>
            <dd>
              <span class={differs('name') ? 'differs' : undefined}>{mine.name}</span>
              {mark('name', mine)}
            </dd>
            <dt>Tag</dt>
            <dd>
              <span class={differs('tag') ? 'differs' : undefined}>{tagWords(mine.tag)}</span>
              {mark('tag', mine)}
            </dd>
          </dl>
        </section>
        <section aria-labelledby="conflict-stored" class="card">
          <h3 id="conflict-stored">Stored version</h3>
          {stored === null ? (
            <p>(deleted)</p>
          ) : (
            <dl class="facts">
              <dt>Name</dt>
              <dd>
                <span class={differs('name') ? 'differs' : undefined}>{stored.version.name}</span>
                {mark('name', stored.version)}
              </dd>
              <dt>Tag</dt>
              <dd>
                <span class={differs('tag') ? 'differs' : undefined}>{tagWords(stored.version.tag)}</span>
                {mark('tag', stored.version)}
              </dd>
            </dl>
          )}
        </section>
      </div>
      {stored !== null && opened !== undefined && <p>{keepMineSays(changesOf(mine, opened))}</p>}
      <div class="actions">
        <FocusableButton unavailable={busy} onClick={onKeepMine}>
          Keep mine
        </FocusableButton>
        <FocusableButton class="quiet" unavailable={busy} onClick={onTakeStored}>
          {stored === null ? 'Leave it deleted' : 'Take stored'}
        </FocusableButton>
      </div>
    </>
  );
}

/** What Keep mine does, said before it is chosen: the stored version's other changes stay. */
function keepMineSays(patch: Patch): string {
  if (Object.keys(patch).length === 0) return 'You changed nothing: Keep mine leaves the stored version as it is.';
  return `Keep mine saves the ${fieldsOf(patch)} you changed over the stored version; its other fields stay as they are.`;
}

/** A tag in the comparison: none and the empty one told apart, as the API keeps them. */
function tagWords(tag: string | undefined): string {
  if (tag === undefined) return '(none)';
  return tag === '' ? '(empty)' : tag;
}
