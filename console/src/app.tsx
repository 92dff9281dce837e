import { useEffect, useState } from 'preact/hooks';
import { About } from './about.js';
import { hasScope } from './api.js';
import { Changes } from './changes.js';
import { ChangeFeed, type Change, type FeedState } from './feed.js';
import { Plants } from './plants/plants.js';
import { forgetToken, savedToken, signIn, type Session } from './session.js';
import { SignIn } from './sign-in.js';
import { Message } from './ui.js';
import { Webhooks } from './webhooks/webhooks.js';

/** The console: the sign-in form, or the sections (chosen by the address's #fragment, so Back works). */

const SECTIONS = [
  ['plants', 'Plants'],
  ['changes', 'Changes'],
  ['webhooks', 'Webhooks'],
  ['about', 'About'],
] as const;
type Section = (typeof SECTIONS)[number][0];

function sectionOf(hash: string): Section {
  const name = hash.replace(/^#\/?/, '');
  return SECTIONS.find(([id]) => id === name)?.[0] ?? 'plants';
}

/** The most events the Changes view keeps (the oldest go first). */
const CHANGES_KEPT = 1000;

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => savedToken() !== null);
  const [notice, setNotice] = useState('');

  const signOut = (why = '') => {
    forgetToken();
    setSession(null);
    setNotice(why);
  };
  const refused = (message: string) => signOut(`Signed out: the service no longer accepts this token (${message}).`);
  const start = async (token: string): Promise<string> => {
    const result = await signIn(token, refused);
    if (typeof result === 'string') return result;
    setNotice('');
    setSession(result);
    return '';
  };

  // A reload of the tab keeps the session: the token is checked again, as it may have been revoked meanwhile.
  useEffect(() => {
    const token = savedToken();
    if (token === null) return;
    void start(token).then((problem) => {
      if (problem !== '') signOut(problem);
      setRestoring(false);
    });
  }, []);

  if (session === null) {
    return (
      <main id="main" class="sign-in">
        <h1>Plant Store console</h1>
        {restoring ? <Message text="Signing in…" /> : <SignIn onSignIn={start} notice={notice} />}
      </main>
    );
  }
  return <Signed session={session} onSignOut={() => signOut()} />;
}

function Signed({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const [section, setSection] = useState(() => sectionOf(location.hash));
  const [changes, setChanges] = useState<Change[]>([]);
  // Every event received, counted (the list above stops growing at CHANGES_KEPT): the plants table reloads on it.
  const [received, setReceived] = useState(0);
  const [feed, setFeed] = useState<FeedState>({ kind: 'stopped', reason: 'this token lacks the scope events:read' });
  const live = hasScope(session.info, 'events:read');

  useEffect(() => {
    const onHash = () => setSection(sectionOf(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  // One stream for the whole console: the plants table reloads on it, the Changes view lists it.
  useEffect(() => {
    if (!live) return;
    const follower = new ChangeFeed(
      session.client,
      (change) => {
        setChanges((list) => (list.length >= CHANGES_KEPT ? [...list.slice(1), change] : [...list, change]));
        setReceived((count) => count + 1);
      },
      setFeed,
    );
    void follower.run();
    return () => follower.stop();
  }, [session, live]);

  const title = SECTIONS.find(([id]) => id === section)![1];
  useEffect(() => {
    document.title = `${title} · Plant Store console`;
  }, [title]);

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <p class="brand">Plant Store</p>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map(([id, name]) => (
              <li key={id}>
                <a href={`#${id}`} aria-current={id === section ? 'page' : undefined}>
                  {name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="live" role="status">
          {feedWords(feed)}
        </p>
        <button type="button" class="quiet" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>{title}</h1>
        {section === 'plants' && <Plants session={session} received={received} />}
        {section === 'changes' && <Changes session={session} changes={changes} feed={feed} />}
        {section === 'webhooks' && <Webhooks session={session} />}
        {section === 'about' && <About session={session} />}
      </main>
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
    case 'stopped':
      return `Live updates unavailable: ${state.reason}`;
  }
}
