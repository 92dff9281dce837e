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
 * shown), with its type, the newest CHANGES_KEPT. "Pause" freezes the list while events keep arriving;
 * "Resume" shows them all, none skipped (the newest CHANGES_KEPT, when more came). The type boxes choose
 * which events the list shows.
 */
export function Changes({ session, changes, received, feed }: { session: Session; changes: Change[]; received: number; feed: FeedState }) {
  // The list shown when paused, as it was, and the count of events received then: the list kept drops its
  // oldest events past CHANGES_KEPT, so an event looked for in it later may be gone (the paused view emptied).
  const [frozen, setFrozen] = useState<{ list: Change[]; received: number } | null>(null);
  const [shown, setShown] = useState<ReadonlySet<EventType>>(new Set(EVENT_TYPES));
  if (!hasScope(session.info, 'events:read')) return <p class="unavailable">{lacking('events:read', 'Following the changes')}</p>;

  const paused = frozen !== null;
  const listed = paused ? frozen.list : changes;
  const visible = listed.filter((change) => shown.has(change.type));
  const waiting = paused ? received - frozen.received : 0;
  const toggle = (type: EventType, on: boolean) => {
    const next = new Set(shown);
    if (on) next.add(type);
    else next.delete(type);
    setShown(next);
  };

  return (
    <>
      <div class="actions">
        <button type="button" onClick={() => setFrozen(paused ? null : { list: changes, received })}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <p role="status">{paused ? pausedWords(waiting) : feed.kind === 'live' ? 'Following the feed.' : ''}</p>
      </div>
      <fieldset class="types">
        <legend>Event types shown</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type}>
            <input type="checkbox" checked={shown.has(type)} onChange={(e) => toggle(type, e.currentTarget.checked)} /> {type}
          </label>
        ))}
      </fieldset>
      {listed.length === 0 ? (
        <p>No changes since you signed in. Writes by anyone appear here as they commit.</p>
      ) : visible.length === 0 ? (
        <p>None of the changes listed is of the event types chosen.</p>
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

/** What Pause holds back; past what the list keeps, Resume cannot show them all, and says so beforehand. */
function pausedWords(waiting: number): string {
  const count = `${waiting.toLocaleString('en')} new ${waiting === 1 ? 'event' : 'events'} waiting`;
  return waiting > CHANGES_KEPT ? `Paused: ${count}; Resume shows the newest ${CHANGES_KEPT.toLocaleString('en')}.` : `Paused: ${count}.`;
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
        <td class="text">{change.name ?? ''}</td>
        <td class="text">{change.tag ?? ''}</td>
        <td class="id">{change.id}</td>
      </tr>
    );
  }
}
