import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { About } from './about.js';
import { hasScope } from './api.js';
import { Changes, CHANGES_KEPT } from './changes.js';
import { batched, type Change, type FeedState } from './feed.js';
import { SharedFeed } from './shared-feed.js';
import { Plants } from './plants/plants.js';
import { DEFAULT_VIEW, parseRoute, routeHash, SECTIONS, type PlantsView, type Route } from './route.js';
import { forgetToken, savedToken, signIn, type Session, type SignInFailure } from './session.js';
import { ShortcutsHelp, useShortcuts } from './shortcuts.js';
import { SignIn, Unchecked } from './sign-in.js';
import { Message } from './ui.js';
import { Tokens } from './tokens/tokens.js';
import { Webhooks } from './webhooks/webhooks.js';
import { LeaveConfirm, useGuardedHash } from './unsaved.js';

/** The console: the sign-in form, or the sections (the view named by the address's #fragment: route.ts). */

/** The events received are shown at most this often: one render for a burst, not one per event. */
const CHANGES_SHOWN_EVERY_MS = 100;

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => savedToken() !== null);
  const [notice, setNotice] = useState('');
  // Why the token kept in this tab could not be checked at a reload (the service did not refuse it): kept, to try again.
  const [unchecked, setUnchecked] = useState('');
  // The session signed in, for signOut to end (its setter's value is not at hand in a callback made once).
  const current = useRef<Session | null>(null);

  // The same functions on every render: they use only the state's setters and the ref.
  const signOut = useCallback((why = '') => {
    current.current?.end();
    current.current = null;
    forgetToken();
    setSession(null);
    setNotice(why);
  }, []);
  const start = useCallback(
    async (token: string): Promise<SignInFailure | null> => {
      const refused = (message: string) => signOut(`Signed out: the service no longer accepts this token (${message}).`);
      const result = await signIn(token, refused);
      if ('problem' in result) return result;
      setNotice('');
      current.current = result;
      setSession(result);
      return null;
    },
    [signOut],
  );

  // A reload of the tab keeps the session: the token is checked again, as it may have been revoked meanwhile.
  // Only the token refused (401) signs out and forgets it: a 429, a 5xx or no answer says nothing of it.
  const restore = useCallback(() => {
    const token = savedToken();
    if (token === null) return;
    setRestoring(true);
    void start(token).then((failure) => {
      if (failure?.refused === true) signOut(failure.problem);
      setUnchecked(failure !== null && !failure.refused ? failure.problem : '');
      setRestoring(false);
    });
  }, [start, signOut]);
  useEffect(restore, [restore]);

  if (session === null) {
    return (
      <main id="main" class="sign-in">
        <h1>Plant Store console</h1>
        {restoring ? (
          <Message text="Signing in…" />
        ) : unchecked !== '' ? (
          <Unchecked
            problem={unchecked}
            onRetry={restore}
            onForget={() => {
              forgetToken();
              setUnchecked('');
            }}
          />
        ) : (
          <SignIn onSignIn={async (token) => (await start(token))?.problem ?? ''} notice={notice} />
        )}
      </main>
    );
  }
  return <Signed session={session} onSignOut={signOut} />;
}

/**
 * The route the address names. An address that names a view in other words than the console's own (a bad
 * value, a default spelt out) is rewritten in place to the view shown, with no new entry in the history.
 */
function useRoute(): { route: Route; leaving: boolean; leave: () => void; stay: () => void } {
  // Another section asked about first while a form holds unsaved changes (unsaved.tsx).
  const { hash, leaving, leave, stay } = useGuardedHash();
  const route = useMemo(() => parseRoute(hash), [hash]);
  useEffect(() => {
    const shown = routeHash(route);
    // No fragment at all is left as it is: it names the default view already. And only the address this
    // route was read from is rewritten: the effect runs a frame after the render, and a link followed
    // meanwhile (a quick click or Enter on the next section) has changed the address, whose hashchange is
    // still to come; rewriting it then put the view before back and lost the person's step.
    if (location.hash === hash && hash !== '' && hash !== shown) history.replaceState(history.state, '', shown);
  }, [hash, route]);
  return { route, leaving, leave, stay };
}

/**
 * Changes the plants view: a new entry in the tab's history. Made from the address as it is now, not as the
 * last render saw it: a sort chosen just before a search is kept.
 */
function changePlants(change: Partial<PlantsView>): void {
  location.hash = routeHash({ section: 'plants', plants: { ...parseRoute(location.hash).plants, ...change } });
}

function Signed({ session, onSignOut }: { session: Session; onSignOut: (why?: string) => void }) {
  const { route, leaving, leave, stay } = useRoute();
  const { section } = route;
  // The Plants link returns to the plants view last shown (its search, tags, order, page size).
  const lastPlants = useRef<PlantsView>(DEFAULT_VIEW);
  if (section === 'plants') lastPlants.current = route.plants;
  const [help, setHelp] = useState(false);
  useShortcuts({ '?': () => setHelp(true) });
  const [changes, setChanges] = useState<Change[]>([]);
  // Every event received, counted (the list above stops growing at CHANGES_KEPT): the plants table reloads on it.
  const [received, setReceived] = useState(0);
  const [feed, setFeed] = useState<FeedState>({ kind: 'stopped', reason: 'this token lacks the scope events:read' });
  // Signed in, the focus goes to the view (the sign-in form, which had it, is gone; it fell to the page's start).
  useLayoutEffect(() => document.getElementById('main')?.focus(), []);
  const live = hasScope(session.info, 'events:read');

  // One stream for the whole console (for all its tabs signed in with this token: shared-feed.ts): the plants table reloads on it, the Changes view lists it. Its events
  // are taken in batches (one render for a burst of them) and the list keeps the newest CHANGES_KEPT.
  useEffect(() => {
    if (!live) return;
    const arrived = batched<Change>((batch) => {
      setChanges((list) => [...list, ...batch].slice(-CHANGES_KEPT));
      setReceived((count) => count + batch.length);
    }, CHANGES_SHOWN_EVERY_MS);
    const follower = new SharedFeed(session.client, session.channel, (change) => arrived.push(change), setFeed);
    void follower.run();
    return () => {
      follower.stop();
      arrived.cancel();
    };
  }, [session, live]);

  const title = SECTIONS.find(([id]) => id === section)![1];
  useEffect(() => {
    document.title = `${title} · Plant Store console`;
  }, [title]);

  return (
    <>
      {/* The address's fragment names the view (route.ts): following #main would replace it, so the link
          moves the focus itself and leaves the address as it is. */}
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <p class="brand">Plant Store</p>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map(([id, name]) => (
              <li key={id}>
                <a href={routeHash({ section: id, plants: lastPlants.current })} aria-current={id === section ? 'page' : undefined}>
                  {name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="live" role="status">
          {feedWords(feed)}
        </p>
        <button type="button" class="quiet" aria-keyshortcuts="?" onClick={() => setHelp(true)}>
          Shortcuts
        </button>
        <button type="button" class="quiet" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>{title}</h1>
        {section === 'plants' && <Plants session={session} received={received} view={route.plants} onView={changePlants} />}
        {section === 'changes' && <Changes session={session} changes={changes} received={received} feed={feed} />}
        {section === 'webhooks' && <Webhooks session={session} />}
        {section === 'tokens' && <Tokens session={session} onSignOut={onSignOut} />}
        {section === 'about' && <About session={session} />}
      </main>
      {help && <ShortcutsHelp onClose={() => setHelp(false)} />}
      {leaving && <LeaveConfirm onLeave={leave} onStay={stay} />}
    </>
  );
}

function feedWords(state: FeedState): string {
  switch (state.kind) {
    case 'connecting':
      return 'Live: connecting…';
    case 'live':
      return 'Live';
    case 'reconnecting':
      return 'Live: reconnecting…';
    case 'hidden':
      return 'Live: paused while this tab is hidden';
    case 'stopped':
      return `Live updates unavailable: ${state.reason}`;
  }
}
