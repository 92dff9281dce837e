import { useEffect, useRef } from 'preact/hooks';
import { Dialog } from './ui.js';

/**
 * Keyboard shortcuts: single keys, as GitHub's and Gmail's are. They never fire while the focus is in a
 * field that takes text (typing `n` in Search types an n), while a dialog is open (the page behind it is
 * inert; Escape, the browser's own, closes the dialog), or with Ctrl, Alt or Meta held (the browser's own).
 */

export const SHORTCUTS: ReadonlyArray<readonly [key: string, what: string]> = [
  ['/', 'Focus Search (Plants)'],
  ['n', 'New plant (Plants)'],
  ['Esc', 'Close a dialog'],
  ['?', 'Show these shortcuts'],
];

/** Inputs that take no text: a shortcut pressed on one of them is a shortcut. */
const NOT_TEXT = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'file', 'color', 'range', 'image']);

/** Whether keys pressed on this element type into it. */
function takesText(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  return target instanceof HTMLInputElement && !NOT_TEXT.has(target.type);
}

/** Runs `actions[event.key]` for a key pressed anywhere on the page, but in a field, in a dialog, or with a modifier. */
export function useShortcuts(actions: Readonly<Record<string, () => void>>): void {
  // The actions of the latest render: the listener is added once.
  const latest = useRef(actions);
  latest.current = actions;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
      if (takesText(event.target) || document.querySelector('dialog[open]') !== null) return;
      const action = latest.current[event.key];
      if (action === undefined) return;
      // The key's own effect (a `/` typed into the field it focuses, an `n` into the form it opens) is not wanted.
      event.preventDefault();
      action();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

/** The list, opened by `?` or the header's "Shortcuts" button. */
export function ShortcutsHelp({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <table class="shortcuts">
        <caption class="visually-hidden">Keyboard shortcuts</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">What it does</th>
          </tr>
        </thead>
        <tbody>
          {SHORTCUTS.map(([key, what]) => (
            <tr key={key}>
              <td>
                <kbd>{key}</kbd>
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">Not while typing in a field.</p>
      <div class="actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
