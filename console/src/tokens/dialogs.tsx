import { useRef, useState } from 'preact/hooks';
import { explain, unreachable, type Client, type Scope, type StoredToken } from '../api.js';
import { SecretShown } from '../secret.js';
import { ConfirmOrCancel, Dialog, Field, Message } from '../ui.js';
import { Submissions } from '../submissions.js';
import { useUnsaved } from '../unsaved.js';
import { grantable, SCOPE_WORDS } from './rules.js';

/** The Tokens view's dialogs: a new token, its secret shown once, and the question before revoking one. */

export function CreateToken({
  client,
  held,
  onClose,
  onCreated,
}: {
  client: Client;
  /** The scopes of the token signed in: the only ones it may grant. */
  held: readonly Scope[];
  onClose: () => void;
  onCreated: (token: StoredToken, secret: string) => void;
}) {
  const { offered, withheld } = grantable(held);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<ReadonlySet<Scope>>(new Set());
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  // The form's keys (one per submission, the same for its retries), and whether one is on its way: a second
  // click before the first has been answered sends nothing (the button's disabled state comes a render later).
  const submissions = useRef(new Submissions());
  const sending = useRef(false);
  // A name typed or a scope chosen is lost if the page goes: asked first.
  useUnsaved(name !== '' || scopes.size > 0);

  const create = async () => {
    if (sending.current) return;
    sending.current = true;
    setBusy(true);
    setProblem('');
    const body = { name: name.trim(), scopes: offered.filter((scope) => scopes.has(scope)) };
    const key = submissions.current.keyFor(JSON.stringify(body));
    try {
      const { data, error, response } = await client.POST('/tokens', { body, params: { header: { 'idempotency-key': key } } });
      submissions.current.ended({ answered: true, status: response.status, code: error?.code });
      if (error !== undefined) return setProblem(explain(error));
      const { secret, ...token } = data;
      onCreated(token, secret);
    } catch (error) {
      submissions.current.ended({ answered: false });
      setProblem(
        `${unreachable(error)} The token may have been made all the same: Create again to find out (the same request, sent again, never makes a second token).`,
      );
    } finally {
      sending.current = false;
      setBusy(false);
    }
  };

  return (
    <Dialog title="Create a token" onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void create();
        }}
      >
        <Field label="Name" value={name} onInput={setName} required hint="What to call it: unique among active tokens, up to 64 characters." />
        <fieldset class="scopes" aria-describedby="token-scopes-hint">
          <legend>Scopes</legend>
          <p id="token-scopes-hint" class="hint">
            A token can grant only the scopes it holds itself, so only the scopes of the token you are signed in with are offered
            {withheld.length === 0 ? '.' : ` (not ${withheld.join(', ')}).`}
          </p>
          {offered.map((scope) => {
            // The label is the scope alone (its accessible name); what it allows describes it.
            const described = `scope-${scope.replace(':', '-')}`;
            return (
              <div key={scope} class="scope">
                <label>
                  <input
                    type="checkbox"
                    checked={scopes.has(scope)}
                    aria-describedby={described}
                    onChange={(event) => {
                      const next = new Set(scopes);
                      if (event.currentTarget.checked) next.add(scope);
                      else next.delete(scope);
                      setScopes(next);
                    }}
                  />{' '}
                  {scope}
                </label>{' '}
                <span id={described} class="hint">
                  {SCOPE_WORDS[scope]}
                </span>
              </div>
            );
          })}
        </fieldset>
        <Message text={problem} error />
        <ConfirmOrCancel action="Create" busy={busy} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** A new token's secret, this once: the service keeps its hash alone, so neither it nor this console can show it again. */
export function TokenSecret({ token, secret, onClose }: { token: StoredToken; secret: string; onClose: () => void }) {
  return (
    <SecretShown title="Token created" secret={secret} onClose={onClose}>
      <p>
        The token <strong>{token.name}</strong> (id <span class="id">{token.id}</span>), with the scopes {token.scopes.join(', ')}.{' '}
        <strong>Its secret is shown only now</strong>: the service keeps only its hash, so it cannot be shown again, not even after a reload. Copy it
        before you close this; send it as <code>Authorization: Bearer &lt;secret&gt;</code>. Lost, revoke the token and make another.
      </p>
    </SecretShown>
  );
}

export function RevokeToken({
  client,
  token,
  own,
  onClose,
  onRevoked,
}: {
  client: Client;
  token: StoredToken;
  /** It is the token signed in: revoked only with self=true, and said so first. */
  own: boolean;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const revoke = async () => {
    setBusy(true);
    try {
      const { error } = await client.DELETE('/tokens/{id}', { params: { path: { id: token.id }, query: own ? { self: true } : {} } });
      if (error !== undefined) return setProblem(explain(error));
      onRevoked();
    } catch (error) {
      setProblem(unreachable(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Revoke the token ${token.name}?`} onClose={onClose}>
      <p>
        <strong>{token.name}</strong> (id <span class="id">{token.id}</span>, scopes {token.scopes.join(', ')}) stops working within a second, on
        every instance of the service, and its open event streams end. It stays listed, as revoked. This cannot be undone.
      </p>
      {own && (
        <p class="message error">
          <strong>This is the token you are signed in with; you will be signed out.</strong> To go on, sign in again with another token.
        </p>
      )}
      <Message text={problem} error />
      <ConfirmOrCancel action={own ? 'Revoke and sign out' : 'Revoke'} busy={busy} onConfirm={() => void revoke()} onCancel={onClose} />
    </Dialog>
  );
}
