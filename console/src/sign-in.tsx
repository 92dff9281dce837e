import { useState } from 'preact/hooks';
import { Field, Message } from './ui.js';

/** The sign-in form: one field, "Token", and why the last try failed, in words. */
export function SignIn({ onSignIn, notice }: { onSignIn: (token: string) => Promise<string>; notice: string }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="card"
      onSubmit={(event) => {
        event.preventDefault();
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
      <button type="submit" disabled={busy}>
        Sign in
      </button>
    </form>
  );
}
