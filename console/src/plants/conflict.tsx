import { useLayoutEffect, useRef } from 'preact/hooks';
import type { StoredPlant } from '../api.js';
import { FocusableButton } from '../ui.js';

/**
 * An edit conflict: the plant was changed (or deleted) by someone else while this user edited it. Both
 * versions side by side, the differences said in words and by whom, and what Keep mine would save.
 */

/** A plant's fields as saved: no tag (undefined) is not the empty tag (""), which the API keeps apart. */
export interface Version {
  name: string;
  tag: string | undefined;
}

/** The plant as stored now, with its ETag; null when it is gone. */
export type Stored = { version: Version; etag: string } | null;

/** Mine and the stored version; `opened`, the version the edit started from (none for a new plant): which side changed what. */
export type Conflict = { mine: Version; stored: Stored; opened?: Version };

/** A JSON merge patch of a plant: a field left out stays as stored, `tag: null` removes the tag. */
export type Patch = { name?: string; tag?: string | null };

/** The fields this user changed from the version the edit started from, as a merge patch. */
export function changesOf(mine: Version, opened: Version): Patch {
  return {
    ...(mine.name !== opened.name && { name: mine.name }),
    ...(mine.tag !== opened.tag && { tag: mine.tag ?? null }),
  };
}

/** The fields a patch names, in words ("name and tag"). */
function fieldsOf(patch: Patch): string {
  return Object.keys(patch).join(' and ');
}

export function versionOf(plant: Pick<StoredPlant, 'name' | 'tag'>): Version {
  return { name: plant.name, tag: plant.tag };
}

export function ConflictView({
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
