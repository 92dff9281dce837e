import { Component } from 'preact';
import { useState } from 'preact/hooks';
import { EVENT_TYPES, hasScope, lacking, type EventType } from './api.js';
import type { Change, FeedState } from './feed.js';
import type { Session } from './session.js';
import { TableBox, when } from './ui.js';

/** The most events the Changes view keeps (the oldest go first). */
export const CHANGES_KEPT = 1000;

/**
 * The change feed as it arrives, newest first: every event since sign-in (the feed runs whatever view is
 * shown), with its type. "Pause" freezes the list while events keep arriving; "Resume" shows them all,
 * none skipped. The type boxes choose which events the list shows.
 */
export function Changes({ session, changes, feed }: { session: Session; changes: Change[]; feed: FeedState }) {
  // The last event shown when paused (by id: the list drops its oldest events past a thousand).
  const [frozenAt, setFrozenAt] = useState<{ id: string } | null>(null);
  const [shown, setShown] = useState<ReadonlySet<EventType>>(new Set(EVENT_TYPES));
  if (!hasScope(session.info, 'events:read')) return <p class="unavailable">{lacking('events:read', 'Following the changes')}</p>;

  const paused = frozenAt !== null;
  const cut = paused ? changes.findIndex((change) => change.id === frozenAt.id) + 1 : changes.length;
  const visible = changes.slice(0, cut).filter((change) => shown.has(change.type));
  const waiting = changes.length - cut;
  const toggle = (type: EventType, on: boolean) => {
    const next = new Set(shown);
    if (on) next.add(type);
    else next.delete(type);
    setShown(next);
  };

  return (
    <>
      <div class="actions">
        <button type="button" onClick={() => setFrozenAt(paused ? null : { id: changes[changes.length - 1]?.id ?? '' })}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <p role="status">
          {paused ? `Paused: ${waiting} new ${waiting === 1 ? 'event' : 'events'} waiting.` : feed.kind === 'live' ? 'Following the feed.' : ''}
        </p>
      </div>
      <fieldset class="types">
        <legend>Event types shown</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type}>
            <input type="checkbox" checked={shown.has(type)} onChange={(e) => toggle(type, e.currentTarget.checked)} /> {type}
          </label>
        ))}
      </fieldset>
      {visible.length === 0 ? (
        <p>No changes since you signed in. Writes by anyone appear here as they commit.</p>
      ) : (
        <TableBox label="Changes table">
          <table class="changes">
            <caption class="visually-hidden">Changes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Plant</th>
                <th scope="col">Name</th>
                <th scope="col">Tag</th>
                <th scope="col">Event id</th>
              </tr>
            </thead>
            <tbody>
              {visible
                .slice()
                .reverse()
                .map((change) => (
                  <ChangeRow key={change.id} change={change} />
                ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}

/**
 * One event's row, drawn once: a new batch of events draws only its own rows (the thousand shown were all
 * drawn again, their times formatted again, at every event). An event never changes.
 */
class ChangeRow extends Component<{ change: Change }> {
  override shouldComponentUpdate(next: { change: Change }): boolean {
    return next.change !== this.props.change;
  }

  override render() {
    const { change } = this.props;
    return (
      <tr data-event-id={change.id}>
        <td>{when(change.timestamp)}</td>
        <td>
          <span class={`badge ${change.type.replace('plant.', '')}`}>{change.type}</span>
        </td>
        <td class="id">{String(change.plantId)}</td>
        <td>{change.name ?? ''}</td>
        <td>{change.tag ?? ''}</td>
        <td class="id">{change.id}</td>
      </tr>
    );
  }
}
