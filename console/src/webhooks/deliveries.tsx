import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { explain, unreachable, type Client, type Endpoint } from '../api.js';
import { useCursorPages } from '../pages.js';
import { Submissions } from '../submissions.js';
import { Message, TableBox, when } from '../ui.js';

/**
 * One endpoint's messages, newest first: status, attempts, the receiver's last answer and error, the next
 * attempt; refreshed every few seconds while shown. "Replay" sends the failed ones of a time window again.
 */

type Status = 'pending' | 'delivered' | 'failed';
const REFRESH_MS = 5000;
const PAGE = 50;
/** The API's largest page: a refresh reads the deliveries shown again in one request, up to this many. */
const PAGE_MAX = 1000;

/** A datetime-local input's value (local time, minutes) for a moment. */
function localInput(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

export function Deliveries({ client, endpoint }: { client: Client; endpoint: Endpoint }) {
  const [status, setStatus] = useState<Status | ''>('');
  const statusId = useId();
  const path = { id: endpoint.id };
  const { list, more, problem, load, refresh } = useCursorPages((cursor, atLeast = 0) => {
    const limit = Math.min(PAGE_MAX, Math.max(PAGE, atLeast));
    const query = { limit, ...(status !== '' && { status }), ...(cursor !== undefined && { cursor }) };
    return client.GET('/webhooks/{id}/deliveries', { params: { path, query } });
  });
  // A new status starts at the first page; the refreshes keep the older deliveries a person has shown.
  useEffect(() => {
    void load();
    const timer = setInterval(() => void refresh(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [status, load, refresh]);

  return (
    <section class="deliveries" aria-label={`Deliveries of ${endpoint.url}`}>
      <h3>Deliveries</h3>
      <div class="actions">
        <div class="field">
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
            <option value="">Any</option>
            <option value="pending">Pending</option>
            <option value="failed">Failed</option>
            <option value="delivered">Delivered</option>
          </select>
        </div>
        <button type="button" class="quiet" onClick={() => void refresh()}>
          Refresh deliveries
        </button>
      </div>
      <Message text={problem} error />
      {list?.length === 0 && <p>No deliveries{status === '' ? '' : ` with status ${status}`}.</p>}
      {list !== null && list.length > 0 && (
        <TableBox label="Deliveries table">
          <table>
            <caption class="visually-hidden">Deliveries of {endpoint.url}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Last error</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {list.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    {delivery.type} <span class="id">plant {String(delivery.plantId)}</span>
                  </td>
                  <td>
                    <span class={`badge ${delivery.status}`}>{delivery.status}</span>
                  </td>
                  <td>{delivery.attempts}</td>
                  <td>{delivery.lastStatus ?? '—'}</td>
                  <td>{delivery.lastError ?? '—'}</td>
                  <td>{when(delivery.lastAttemptAt)}</td>
                  <td>{when(delivery.nextAttemptAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {more !== undefined && (
        <button type="button" class="quiet" onClick={() => void load(more)}>
          Older deliveries
        </button>
      )}
      <Replay client={client} endpoint={endpoint} onReplayed={() => void refresh()} />
    </section>
  );
}

function Replay({ client, endpoint, onReplayed }: { client: Client; endpoint: Endpoint; onReplayed: () => void }) {
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - 24 * 3_600_000)));
  const [result, setResult] = useState('');
  const [problem, setProblem] = useState('');
  const sinceId = useId();
  // A replay sent again after a lost answer carries the same Idempotency-Key: without it, the messages the
  // first one queued again (and any failed since) were queued once more, and the count it told was the second's.
  const replays = useRef(new Submissions());
  const replay = async () => {
    setResult('');
    setProblem('');
    const start = new Date(since);
    if (Number.isNaN(start.getTime())) return setProblem('Give the time the replay starts from.');
    const body = { since: start.toISOString() };
    try {
      const key = replays.current.keyFor(JSON.stringify({ id: endpoint.id, ...body }));
      const { data, error, response } = await client.POST('/webhooks/{id}/replay', {
        params: { path: { id: endpoint.id }, header: { 'idempotency-key': key } },
        body,
      });
      replays.current.ended({ answered: true, status: response.status, code: error?.code });
      if (error !== undefined) return setProblem(explain(error));
      setResult(`Replay: ${data.requeued} failed ${data.requeued === 1 ? 'message' : 'messages'} sent again.`);
      onReplayed();
    } catch (error) {
      replays.current.ended({ answered: false });
      setProblem(`${unreachable(error)} The replay may have been done all the same: Replay again to find out (sent again, it is done once).`);
    }
  };
  return (
    <form
      class="replay"
      onSubmit={(event) => {
        event.preventDefault();
        void replay();
      }}
    >
      <div class="field">
        <label for={sinceId}>Replay failed messages since</label>
        <input id={sinceId} type="datetime-local" value={since} required onInput={(e) => setSince(e.currentTarget.value)} />
      </div>
      <button type="submit">Replay</button>
      <Message text={result} />
      <Message text={problem} error />
    </form>
  );
}
