import { useEffect, useRef, useState } from 'preact/hooks';
import { explain, hasScope, lacking, unreachable, type Client, type Endpoint } from '../api.js';
import { useCursorPages } from '../pages.js';
import type { Session } from '../session.js';
import { Hidden, Message, when } from '../ui.js';
import { Deliveries } from './deliveries.js';
import { AddEndpoint, Confirm, Int64Confirm, SigningSecret } from './dialogs.js';
import { Submissions } from '../submissions.js';

/**
 * Webhook endpoints: each with its URL, event types and state (and why the service disabled it); add,
 * enable or disable, delete, rotate the signing secret (the new one shown once), switch how its deliveries
 * write ids (numbers or strings, after asking: its receiver must read them so), and each endpoint's deliveries.
 */

type Dialog =
  | { kind: 'add' }
  | { kind: 'secret'; endpoint: Endpoint | { url: string }; secret: string }
  | { kind: 'delete'; endpoint: Endpoint }
  | { kind: 'rotate'; endpoint: Endpoint }
  | { kind: 'int64'; endpoint: Endpoint }
  | null;

export function Webhooks({ session }: { session: Session }) {
  const { client, info } = session;
  // 100 a page; a refresh reads as many as are shown, up to the API's largest page.
  const listEndpoints = (cursor: string | undefined, atLeast = 0) =>
    client.GET('/webhooks', { params: { query: { limit: Math.min(1000, Math.max(100, atLeast)), ...(cursor !== undefined && { cursor }) } } });
  const { list: endpoints, more, problem, setProblem, load, refresh } = useCursorPages(listEndpoints);
  const [done, setDone] = useState('');
  const [dialog, setDialog] = useState<Dialog>(null);
  const [open, setOpen] = useState<string | null>(null);
  // The rotation's Idempotency-Key, the same for a retry after a lost answer: rotated twice, the secret the
  // receiver still checks with (the one before the first rotation) was dropped at once, failing every delivery.
  const rotations = useRef(new Submissions());
  const allowed = hasScope(info, 'webhooks:manage');
  useEffect(() => {
    if (allowed) void load();
  }, [allowed, load]);

  if (!allowed) return <p class="unavailable">{lacking('webhooks:manage', 'Managing webhooks')}</p>;

  /**
   * Runs one change, reloads the list, then says what came of the change: said before the reload, a refusal
   * was cleared at once by the page read well (pages.ts), and shown only while the list loaded.
   */
  const act = async (what: () => Promise<{ error?: { error: number; message: string } }>, success: string) => {
    setDone('');
    let refused = '';
    try {
      const { error } = await what();
      if (error !== undefined) refused = explain(error);
    } catch (error) {
      refused = unreachable(error);
    }
    await refresh();
    if (refused !== '') setProblem(refused);
    else setDone(success);
  };
  const setEnabled = (endpoint: Endpoint, enabled: boolean) =>
    act(
      () => client.PATCH('/webhooks/{id}', { params: { path: { id: endpoint.id } }, body: { enabled } }),
      `${enabled ? 'Enabled' : 'Disabled'} ${endpoint.url}.`,
    );
  const setInt64 = (endpoint: Endpoint, int64: 'number' | 'string') =>
    act(
      () => client.PATCH('/webhooks/{id}', { params: { path: { id: endpoint.id } }, body: { int64 } }),
      `Deliveries to ${endpoint.url} now write ids as ${int64}s.`,
    );

  return (
    <>
      <div class="actions">
        <button type="button" onClick={() => setDialog({ kind: 'add' })}>
          Add endpoint
        </button>
        <button type="button" class="quiet" onClick={() => void refresh()}>
          Refresh
        </button>
      </div>
      <Message text={done} />
      <Message text={problem} error />
      {endpoints?.length === 0 && <p>No webhook endpoints yet.</p>}
      <ul class="endpoints">
        {endpoints?.map((endpoint) => (
          <li key={endpoint.id} class="card">
            <h2 class="url">{endpoint.url}</h2>
            <dl class="facts">
              <dt>State</dt>
              <dd class={endpoint.enabled ? 'ok' : 'bad'}>
                {endpoint.enabled ? 'enabled' : `disabled${endpoint.disabledReason === undefined ? '' : `: ${endpoint.disabledReason}`}`}
              </dd>
              <dt>Events</dt>
              <dd>{endpoint.events.join(', ')}</dd>
              <dt>Ids in deliveries</dt>
              <dd>{endpoint.int64 === 'string' ? 'strings' : 'numbers'}</dd>
              {endpoint.description !== undefined && (
                <>
                  <dt>Description</dt>
                  <dd>{endpoint.description}</dd>
                </>
              )}
              <dt>Added</dt>
              <dd>{when(endpoint.createdAt)}</dd>
              <dt>Id</dt>
              <dd class="id">{endpoint.id}</dd>
            </dl>
            <div class="actions">
              <button
                type="button"
                class="quiet"
                aria-expanded={open === endpoint.id}
                onClick={() => setOpen(open === endpoint.id ? null : endpoint.id)}
              >
                Deliveries<Hidden> of {endpoint.url}</Hidden>
              </button>
              <button type="button" class="quiet" onClick={() => void setEnabled(endpoint, !endpoint.enabled)}>
                {endpoint.enabled ? 'Disable' : 'Enable'}
                <Hidden> {endpoint.url}</Hidden>
              </button>
              <button type="button" class="quiet" onClick={() => setDialog({ kind: 'int64', endpoint })}>
                Ids as {endpoint.int64 === 'string' ? 'numbers' : 'strings'}
                <Hidden> for {endpoint.url}</Hidden>
              </button>
              <button type="button" class="quiet" onClick={() => setDialog({ kind: 'rotate', endpoint })}>
                Rotate secret<Hidden> of {endpoint.url}</Hidden>
              </button>
              <button type="button" class="quiet danger" onClick={() => setDialog({ kind: 'delete', endpoint })}>
                Delete<Hidden> {endpoint.url}</Hidden>
              </button>
            </div>
            {open === endpoint.id && <Deliveries client={client} endpoint={endpoint} />}
          </li>
        ))}
      </ul>
      {more !== undefined && (
        <button type="button" class="quiet" onClick={() => void load(more)}>
          More endpoints
        </button>
      )}

      {dialog?.kind === 'add' && (
        <AddEndpoint
          client={client}
          onClose={() => setDialog(null)}
          onAdded={(endpoint, secret) => {
            setDialog({ kind: 'secret', endpoint, secret });
            setDone(`Added ${endpoint.url}.`);
            void refresh();
          }}
        />
      )}
      {dialog?.kind === 'secret' && <SigningSecret url={dialog.endpoint.url} secret={dialog.secret} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'delete' && (
        <Confirm
          title="Delete this endpoint?"
          text={`${dialog.endpoint.url} and its undelivered messages will be deleted. This cannot be undone.`}
          action="Delete"
          onClose={() => setDialog(null)}
          onConfirm={() => {
            const endpoint = dialog.endpoint;
            setDialog(null);
            if (open === endpoint.id) setOpen(null);
            void act(() => client.DELETE('/webhooks/{id}', { params: { path: { id: endpoint.id } } }), `Deleted ${endpoint.url}.`);
          }}
        />
      )}
      {dialog?.kind === 'rotate' && (
        <Confirm
          title="Rotate the signing secret?"
          text={`A new secret for ${dialog.endpoint.url}, shown once. For 24 hours deliveries carry signatures with both the old and the new one.`}
          action="Rotate"
          onClose={() => setDialog(null)}
          onConfirm={() => void rotate(client, rotations.current, dialog.endpoint, setDialog, setProblem)}
        />
      )}
      {dialog?.kind === 'int64' && (
        <Int64Confirm
          endpoint={dialog.endpoint}
          onClose={() => setDialog(null)}
          onConfirm={(int64) => {
            setDialog(null);
            void setInt64(dialog.endpoint, int64);
          }}
        />
      )}
    </>
  );
}

async function rotate(
  client: Client,
  rotations: Submissions,
  endpoint: Endpoint,
  setDialog: (dialog: Dialog) => void,
  setProblem: (text: string) => void,
): Promise<void> {
  try {
    const header = { 'idempotency-key': rotations.keyFor(endpoint.id) };
    const { data, error, response } = await client.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: endpoint.id }, header } });
    rotations.ended({ answered: true, status: response.status, code: error?.code });
    if (error !== undefined) {
      setDialog(null);
      return setProblem(explain(error));
    }
    setDialog({ kind: 'secret', endpoint, secret: data.secret });
  } catch (error) {
    rotations.ended({ answered: false });
    setDialog(null);
    setProblem(`${unreachable(error)} The secret may have been rotated all the same: Rotate secret again to find out (sent again, it rotates once).`);
  }
}
