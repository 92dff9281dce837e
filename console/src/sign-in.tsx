import { useEffect, useRef, useState } from 'preact/hooks';
import { Field, FocusableButton, Message } from './ui.js';

/** The sign-in form: one field, "Token", and why the last try failed, in words. */
export function SignIn({ onSignIn, notice }: { onSignIn: (token: string) => Promise<string>; notice: string }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  // The form's one field has the focus as it shows: at the page's start, and after signing out (the Sign
  // out button pressed is gone, and the focus fell to the page's start).
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector('input')?.focus(), []);
  return (
    <form
      ref={form}
      class="card"
      onSubmit={(event) => {
        event.preventDefault();
        if (busy) return;
        setBusy(true);
        setProblem('');
        void onSignIn(token.trim()).then((why) => {
          setBusy(false);
          setProblem(why);
        });
      }}
    >
      <Message text={notice} />
      <Field
        label="Token"
        type="password"
        value={token}
        onInput={setToken}
        required
        hint="A bearer token of this service (plant-store token create makes one). It is kept in this tab only, until you sign out or close the tab."
      />
      <Message text={problem} error />
      <FocusableButton type="submit" unavailable={busy}>
        Sign in
      </FocusableButton>
    </form>
  );
}

/**
 * At a reload, the token kept in this tab could not be checked (the service answered 429 or 5xx, or not at
 * all): it was not refused, so it is kept, to try again, or forgotten for another.
 */
export function Unchecked({ problem, onRetry, onForget }: { problem: string; onRetry: () => void; onForget: () => void }) {
  return (
    <div class="card">
      <Message text={`Your token could not be checked: ${problem}`} error />
      <p>The service did not refuse it: it is kept in this tab. Try again, or sign in with another token.</p>
      <div class="actions">
        <button type="button" onClick={onRetry}>
          Try again
        </button>
        <button type="button" class="quiet" onClick={onForget}>
          Use another token
        </button>
      </div>
    </div>
  );
}
