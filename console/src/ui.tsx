import type { ComponentChildren } from 'preact';
import { useId, useLayoutEffect, useRef } from 'preact/hooks';

/** Small pieces every view uses: a modal dialog, messages that screen readers announce, a labelled field, a form's Save and Cancel. */

/**
 * A modal dialog (the browser's own <dialog>, opened with showModal): focus moves into it and stays there,
 * the page behind is inert, Escape closes it. Its title names it for screen readers.
 */
export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // Modal in the same task that puts it in the page (a layout effect), not a frame later (an effect): a key
  // pressed right after the click that opened it (Escape) must find it open.
  useLayoutEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    return () => dialog.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

/** A message that is read out when it appears: `alert` for failures, a polite status otherwise. */
export function Message({ text, error = false }: { text: string; error?: boolean }) {
  if (text === '') return null;
  return error ? (
    <p role="alert" class="message error">
      {text}
    </p>
  ) : (
    <p role="status" class="message">
      {text}
    </p>
  );
}

/** What was done, said (a polite status), and whether the focus goes to it: `done` is a new object each time. */
export interface Done {
  text: string;
  focus: boolean;
}

/**
 * What was done, read out as it appears; given `focus`, it takes the focus too: after a delete, the control
 * pressed (the row's Delete, or Delete selected) is gone or disabled, and the focus fell to the page's start.
 */
export function DoneMessage({ done }: { done: Done }) {
  const ref = useRef<HTMLParagraphElement>(null);
  // After the dialog that did it has closed (in the same commit) and given the focus back to what opened it.
  useLayoutEffect(() => {
    if (done.focus) ref.current?.focus();
  }, [done]);
  if (done.text === '') return null;
  return (
    <p ref={ref} role="status" class="message" tabIndex={-1}>
      {done.text}
    </p>
  );
}

/**
 * A button that stays focusable while it is unavailable: `aria-disabled`, its presses ignored (and a
 * submit button's submission with them), instead of `disabled`. A focused button that becomes disabled
 * drops the focus to the page's start (or to nothing, in a dialog): Next page while its page loads, Sign in
 * and Save while their request runs, and a keyboard user had to find the way back at every press.
 */
export function FocusableButton({
  unavailable,
  type = 'button',
  onClick,
  class: className,
  autofocus,
  children,
}: {
  unavailable: boolean;
  type?: 'button' | 'submit';
  onClick?: () => void;
  class?: string;
  autofocus?: boolean;
  children: ComponentChildren;
}) {
  return (
    <button
      type={type}
      class={className}
      autofocus={autofocus}
      aria-disabled={unavailable ? 'true' : undefined}
      onClick={(event) => {
        if (unavailable) event.preventDefault();
        else onClick?.();
      }}
    >
      {children}
    </button>
  );
}

/**
 * A dialog's last row: its action, unavailable while busy, and Cancel, which closes it with nothing done.
 * The action submits the dialog's form (Save by default) or, given `onConfirm`, runs that as a danger
 * (Delete, Revoke): then Cancel has the focus as the dialog opens, so that Enter, Enter deletes nothing.
 * `holdCancel`: Cancel is disabled while busy too (an action that cannot be taken back halfway).
 */
export function ConfirmOrCancel({
  action = 'Save',
  busy = false,
  onConfirm,
  onCancel,
  holdCancel = false,
}: {
  action?: string;
  busy?: boolean;
  onConfirm?: () => void;
  onCancel: () => void;
  holdCancel?: boolean;
}) {
  return (
    <div class="actions">
      {onConfirm === undefined ? (
        <FocusableButton type="submit" unavailable={busy}>
          {action}
        </FocusableButton>
      ) : (
        <FocusableButton class="danger" unavailable={busy} onClick={onConfirm}>
          {action}
        </FocusableButton>
      )}
      <FocusableButton class="quiet" unavailable={holdCancel && busy} onClick={onCancel} autofocus={onConfirm !== undefined}>
        Cancel
      </FocusableButton>
    </div>
  );
}

interface FieldProps {
  label: string;
  value: string;
  onInput: (value: string) => void;
  type?: 'text' | 'password' | 'url';
  required?: boolean;
  readOnly?: boolean;
  autoComplete?: string;
  hint?: string;
  inputMode?: 'numeric' | 'text' | 'url';
}

/** A text field with its label (and a hint, tied to it by aria-describedby). */
export function Field({ label, value, onInput, type = 'text', required, readOnly, autoComplete = 'off', hint, inputMode }: FieldProps) {
  const id = useId();
  const common = {
    id,
    value,
    required,
    readOnly,
    autoComplete,
    inputMode,
    spellcheck: false,
    'aria-describedby': hint === undefined ? undefined : `${id}-hint`,
    onInput: (event: { currentTarget: HTMLInputElement }) => onInput(event.currentTarget.value),
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {/* Preact types <input> as a union told apart by `type`: one element per type. */}
      {type === 'password' ? (
        <input type="password" {...common} />
      ) : type === 'url' ? (
        <input type="url" {...common} />
      ) : (
        <input type="text" {...common} />
      )}
      {hint !== undefined && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/**
 * A wide table's box, which scrolls sideways on a narrow screen: focusable, so that a keyboard can scroll
 * it too, and named, as a region a screen reader can jump to.
 */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** Text for screen readers only: completes a short visible label ("Edit" → "Edit plant 7"). */
export function Hidden({ children }: { children: ComponentChildren }) {
  return <span class="visually-hidden">{children}</span>;
}

/** A count and its noun: "1 plant", "3 plants". */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** A time from the API (ISO 8601), in the reader's own zone and words. */
export function when(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
