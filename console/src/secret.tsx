import type { ComponentChildren } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';
import { Dialog, Message } from './ui.js';

/**
 * A secret the service shows this once (a webhook's signing secret, a new token): in a read-only field
 * labelled Secret, with a Copy button. Kept by the caller's state alone, so it is gone once this closes.
 */
export function SecretShown({
  title,
  secret,
  onClose,
  children,
}: {
  title: string;
  secret: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const [copied, setCopied] = useState('');
  const field = useRef<HTMLInputElement>(null);
  const id = useId();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard (a page not served over https nor from loopback, or a browser that refuses): select it.
      field.current?.select();
      setCopied('The browser did not allow copying: the secret is selected, copy it with your keyboard.');
    }
  };
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      <div class="field">
        <label for={id}>Secret</label>
        <input
          id={id}
          ref={field}
          class="id"
          readOnly
          value={secret}
          autoComplete="off"
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
      </div>
      <Message text={copied} />
      <div class="actions">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" class="quiet" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
