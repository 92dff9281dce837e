import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { explain, hasScope, lacking, nextLink, unreachable, type StoredToken } from '../api.js';
import type { Session } from '../session.js';
import { FocusableButton, Hidden, Message, TableBox, when } from '../ui.js';
import { CreateToken, RevokeToken, TokenSecret } from './dialogs.js';
import { grantable, unlistedNote } from './rules.js';

/**
 * The stored tokens (GET /tokens, with tokens:manage): id, name, scopes, when made, active or revoked, a page
 * at a time; Create token (its secret shown once, kept in this component's state alone, so it is gone after
 * the dialog, a reload or another view) and Revoke per active token, after asking (the token signed in with
 * is revoked only when the question said so, and signs the console out).
 */

type Dialog = { kind: 'create' } | { kind: 'secret'; token: StoredToken; secret: string } | { kind: 'revoke'; token: StoredToken } | null;

type State = '' | 'active' | 'revoked';
const STATES: ReadonlyArray<readonly [State, string]> = [
  ['', 'Active and revoked'],
  ['active', 'Active only'],
  ['revoked', 'Revoked only'],
];

/** Tokens a page. */
const PAGE_SIZE = 25;

interface Page {
  tokens: StoredToken[];
  next: string | undefined;
  /** The Unlisted-Token-Sources header, in words. */
  unlisted: string;
  /** The state and cursor it was read for: until the page asked for now has come, Next page waits for it. */
  state: State;
  cursor: string | undefined;
}

export function Tokens({ session, onSignOut }: { session: Session; onSignOut: (why: string) => void }) {
  const { client, info } = session;
  const allowed = hasScope(info, 'tokens:manage');
  // The state shown, and the cursors of the pages before this one and this one's (undefined: the first page).
  const [paging, setPaging] = useState<{ state: State; cursors: Array<string | undefined> }>({ state: '', cursors: [undefined] });
  const { state, cursors } = paging;
  const cursor = cursors[cursors.length - 1];
  const [page, setPage] = useState<Page | null>(null);
  const [problem, setProblem] = useState('');
  const [done, setDone] = useState('');
  const [dialog, setDialog] = useState<Dialog>(null);
  const loads = useRef(0);

  const load = useCallback(async () => {
    if (!allowed) return;
    const mine = ++loads.current;
    try {
      const query = { limit: PAGE_SIZE, ...(state !== '' && { status: state }), ...(cursor !== undefined && { cursor }) };
      const { data, error, response } = await client.GET('/tokens', { params: { query } });
      // An older load answering late must not overwrite a newer one.
      if (mine !== loads.current) return;
      if (error !== undefined) return setProblem(explain(error));
      setProblem('');
      setPage({ tokens: data, next: nextLink(response), unlisted: unlistedNote(response.headers.get('unlisted-token-sources')), state, cursor });
    } catch (error) {
      if (mine === loads.current) setProblem(unreachable(error));
    }
  }, [client, allowed, state, cursor]);
  useEffect(() => void load(), [load]);

  if (!allowed) {
    return (
      <>
        <p class="unavailable">{lacking('tokens:manage', 'Managing tokens')}</p>
        <p class="hint">
          A token can see and make other tokens only with it. Tokens made before it existed do not have it, not even full-access ones: ask whoever
          runs the service for a token that has it, made with <code>plant-store token create --scope tokens:manage</code> and the other scopes it may
          grant.
        </p>
      </>
    );
  }

  // The next page's cursor once the page asked for has come (a page shown while another loads has its own).
  const nextPage = page !== null && page.state === state && page.cursor === cursor ? page.next : undefined;
  // tokens:manage alone makes no token (the service refuses it): Create token is then unavailable, and says why.
  const makes = grantable(info.scopes).offered.length > 0;
  const signedWith = info.id.startsWith('static:') ? 'a static token' : info.id.startsWith('jwt:') ? 'a JWT' : null;
  const finish = (message: string) => {
    setDone(message);
    void load();
  };

  return (
    <>
      <div class="actions">
        <button
          type="button"
          disabled={!makes}
          aria-describedby={makes ? undefined : 'token-makes-none'}
          onClick={() => setDialog({ kind: 'create' })}
        >
          Create token
        </button>
        <button type="button" class="quiet" onClick={() => void load()}>
          Refresh
        </button>
        <label for="token-state">Show</label>
        <select id="token-state" value={state} onChange={(e) => setPaging({ state: e.currentTarget.value as State, cursors: [undefined] })}>
          {STATES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      {!makes && (
        <p id="token-makes-none" class="note">
          The token you are signed in with holds tokens:manage alone, which makes no token: it can list and revoke tokens. Sign in with a token that
          also holds the scopes to grant.
        </p>
      )}
      {page !== null && page.unlisted !== '' && (
        <p class="note">
          {page.unlisted} {signedWith !== null && `You are signed in with ${signedWith} (${info.id}), which is not listed.`}
        </p>
      )}
      <Message text={done} />
      <Message text={problem} error />

      {page !== null && page.tokens.length === 0 && <p>{state === '' ? 'No tokens yet.' : `No ${state} tokens.`}</p>}
      {page !== null && page.tokens.length > 0 && (
        <TableBox label="Tokens table">
          <table>
            <caption class="visually-hidden">Tokens</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {page.tokens.map((token) => (
                <tr key={token.id}>
                  <td class="id">{token.id}</td>
                  <td>
                    {token.name}
                    {token.id === info.id && (
                      <>
                        {' '}
                        <span class="badge">signed in</span>
                      </>
                    )}
                  </td>
                  <td>{token.scopes.join(', ')}</td>
                  <td>{when(token.createdAt)}</td>
                  <td class={token.revokedAt === null ? 'ok' : 'bad'}>
                    {token.revokedAt === null ? 'active' : `revoked at ${when(token.revokedAt)}`}
                  </td>
                  <td class="row-actions">
                    {token.revokedAt === null && (
                      <button type="button" class="quiet danger" onClick={() => setDialog({ kind: 'revoke', token })}>
                        Revoke<Hidden> {token.name}</Hidden>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <nav class="pager" aria-label="Pages">
        <FocusableButton unavailable={cursors.length === 1} onClick={() => setPaging({ state, cursors: cursors.slice(0, -1) })}>
          Previous page
        </FocusableButton>
        <span role="status">{page === null ? 'Loading…' : `Page ${cursors.length}`}</span>
        <FocusableButton unavailable={nextPage === undefined} onClick={() => setPaging({ state, cursors: [...cursors, nextPage] })}>
          Next page
        </FocusableButton>
      </nav>

      {dialog?.kind === 'create' && (
        <CreateToken
          client={client}
          held={info.scopes}
          onClose={() => setDialog(null)}
          onCreated={(token, secret) => {
            setDialog({ kind: 'secret', token, secret });
            finish(`Created ${token.name}.`);
          }}
        />
      )}
      {dialog?.kind === 'secret' && <TokenSecret token={dialog.token} secret={dialog.secret} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'revoke' && (
        <RevokeToken
          client={client}
          token={dialog.token}
          own={dialog.token.id === info.id}
          onClose={() => setDialog(null)}
          onRevoked={() => {
            const { name, id } = dialog.token;
            if (id === info.id) return onSignOut(`Signed out: you revoked the token you were signed in with (${name}).`);
            setDialog(null);
            finish(`Revoked ${name}.`);
          }}
        />
      )}
    </>
  );
}
