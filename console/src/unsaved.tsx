import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { parseRoute } from './route.js';
import { ConfirmOrCancel, Dialog } from './ui.js';

/**
 * What a form holds typed and not yet saved, kept from being lost without a word: the browser's own question
 * before the tab reloads, closes or leaves the page (beforeunload), and the console's own before another
 * section replaces the one the form is in (app.tsx). The listener is on the window only while some form
 * holds unsaved changes: a page with one is never kept in the back/forward cache by some browsers, and
 * asking when nothing would be lost teaches people to click the question away.
 */

/** The forms holding unsaved changes now (one object each, for as long as they do). */
const holders = new Set<object>();

function askFirst(event: BeforeUnloadEvent): void {
  // The standard way to ask (the browser writes the question itself: a page's own words are ignored), and the
  // older one, for browsers before it (Chromium before 119).
  event.preventDefault();
  event.returnValue = true;
}

/** While `dirty` (and the component is shown), leaving the page asks first. */
export function useUnsaved(dirty: boolean): void {
  // In the commit of the keystroke's render, not a frame later: a reload right after typing asks too.
  useLayoutEffect(() => {
    if (!dirty) return;
    const holder = {};
    if (holders.size === 0) addEventListener('beforeunload', askFirst);
    holders.add(holder);
    return () => {
      holders.delete(holder);
      if (holders.size === 0) removeEventListener('beforeunload', askFirst);
    };
  }, [dirty]);
}

/** Whether some form holds changes not yet saved. */
function hasUnsaved(): boolean {
  return holders.size > 0;
}

/** Where an entry of the tab's history stands, kept in its state (numberEntries). */
function entryOf(): number {
  const state = history.state as { consoleEntry?: unknown } | null;
  return typeof state?.consoleEntry === 'number' ? state.consoleEntry : -1;
}

function markEntry(entry: number): void {
  history.replaceState({ ...(history.state as object | null), consoleEntry: entry }, '');
}

/** The entry of the tab's history shown last. */
let lastEntry = 0;

/**
 * Numbers each entry of the tab's history as it is made (a link, an address typed: right after the one it
 * was made from), so that an entry followed back or forward to tells how far it lies from the one shown.
 * Called once, before the console renders: every entry of this page is numbered.
 */
export function numberEntries(): void {
  if (entryOf() < 0) markEntry(0);
  lastEntry = entryOf();
  addEventListener('hashchange', () => {
    if (entryOf() < 0) markEntry(lastEntry + 1);
    lastEntry = entryOf();
  });
}

/**
 * The address's fragment, as shown. Followed (Back, Forward, an address typed) to another section while a
 * form holds unsaved changes, it is not shown but asked about (`leaving`): `leave` shows it, `stay` returns
 * the tab to the entry shown (Back undone by Forward, an address typed by Back), so that its history stays as
 * it was. Another view within the same section keeps its dialogs open: not asked.
 */
export function useGuardedHash(): { hash: string; leaving: boolean; leave: () => void; stay: () => void } {
  const [hash, setHash] = useState(location.hash);
  const [leaving, setLeaving] = useState(false);
  const shown = useRef({ hash, entry: entryOf() });
  const show = useCallback(() => {
    setLeaving(false);
    shown.current = { hash: location.hash, entry: entryOf() };
    setHash(location.hash);
  }, []);
  useEffect(() => {
    const onHash = () => {
      if (hasUnsaved() && parseRoute(location.hash).section !== parseRoute(shown.current.hash).section) setLeaving(true);
      else show();
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [show]);
  // Its hashchange, back to the section shown, is not asked about.
  const stay = useCallback(() => {
    setLeaving(false);
    const by = shown.current.entry - entryOf();
    if (by !== 0) return history.go(by);
    // Not told apart (never so, as every entry is numbered): the address is made to name the view shown.
    const url = new URL(location.href);
    url.hash = shown.current.hash;
    history.replaceState(history.state, '', url);
  }, []);
  return { hash, leaving, leave: show, stay };
}

/** Asked before another section drops a form's unsaved changes: Leave drops them, Cancel (or Escape) stays. */
export function LeaveConfirm({ onLeave, onStay }: { onLeave: () => void; onStay: () => void }) {
  return (
    <Dialog title="Leave without saving?" onClose={onStay}>
      <p>A form holds changes that are not saved. Leaving this view drops them.</p>
      <ConfirmOrCancel action="Leave" onConfirm={onLeave} onCancel={onStay} />
    </Dialog>
  );
}
