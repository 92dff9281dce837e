import type { Client } from './api.js';
import { ChangeFeed, changeOf, type Change, type FeedState } from './feed.js';

/**
 * One change-feed stream for all the console's tabs of an origin signed in with one token. A browser gives
 * a host six HTTP/1.1 connections, and a stream holds one: six tabs shown at once, each with its own
 * stream, left none for a seventh tab, a search or a save. So one tab, the leader, follows the feed and
 * relays each event over a BroadcastChannel; the others follow it. The leader is elected over the channel
 * alone (the Web Locks API exists only in secure contexts, and plain HTTP, where the limit bites, is not
 * one): a tab that hears no leader claims the lead, the claim of the lowest tab id wins, a leader beats
 * every BEAT_MS, and one that goes (closed, hidden, signed out) says so, or falls silent: a shown tab takes
 * over, its stream resuming after the last event it had. Each relayed event names the place before it: a
 * tab whose place differs (it was hidden while no tab led, or led itself) reads what it lacks as a page of
 * GET /events first, and an event it had already is not taken twice. Only a shown tab leads; with every
 * tab hidden no stream is open, as before. Without BroadcastChannel each tab follows the feed itself.
 */

const BEAT_MS = 1000;
/** A leader not heard for this long is gone (closed without a word): a shown tab claims the lead. */
const SILENT_MS = 3500;
/** How long a claim waits for a leader's beat or a lower tab's claim before the tab leads. */
const CLAIM_MS = 250;
/** How many event ids a tab remembers, to take an event relayed twice (two leaders for a moment) once. */
const SEEN_KEPT = 2000;
const PAGE = 1000;

type Message =
  | { kind: 'beat'; from: string; state: FeedState }
  | { kind: 'claim'; from: string }
  | { kind: 'resign'; from: string }
  /** An event of the leader's stream (`change`), or a frame that moves its place alone (the start frame); `after`: its place before. */
  | { kind: 'frame'; from: string; after: string | undefined; id: string; change?: Change }
  /** The leader's stream was refused for good (the token revoked, or without events:read). */
  | { kind: 'stopped'; from: string; reason: string };

function hidden(): boolean {
  return document.visibilityState === 'hidden';
}

/** A random id for this tab: claims are decided by it. (crypto.randomUUID exists only in secure contexts.) */
function tabId(): string {
  return Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(16).padStart(8, '0')).join('');
}

/** A hash of the token (53 bits, cyrb53), to name its channel: tabs of another token never share its stream. */
export function channelOf(token: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `plant-store.feed.${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)}`;
}

export class SharedFeed {
  private readonly me = tabId();
  private readonly abort = new AbortController();
  private channel: BroadcastChannel | undefined;
  private role: 'follower' | 'candidate' | 'leader' = 'follower';
  /** The leader's own follower of the feed. */
  private own: ChangeFeed | undefined;
  /** When a leader was last heard (Date.now()). */
  private heardAt = 0;
  /** The id of the last event (or start frame) had: this tab's place in the feed. */
  private last: string | undefined;
  private readonly seen = new Set<string>();
  /** The channel's messages are handled one after the other: a catch-up is awaited before the next frame. */
  private work = Promise.resolve();
  private said = '';
  private ownState: FeedState = { kind: 'connecting' };

  constructor(
    private readonly client: Client,
    private readonly name: string,
    private readonly onChange: (change: Change) => void,
    private readonly onState: (state: FeedState) => void,
  ) {}

  stop(): void {
    if (this.abort.signal.aborted) return;
    if (this.role === 'leader') this.resign();
    this.abort.abort();
    this.channel?.close();
  }

  /** Follows the feed, leading or following, until stop() or a refusal of the token's stream; resolves then. */
  async run(): Promise<void> {
    const { signal } = this.abort;
    if (typeof BroadcastChannel === 'undefined') {
      const alone = new ChangeFeed(this.client, this.onChange, this.onState);
      signal.addEventListener('abort', () => alone.stop());
      return alone.run();
    }
    const channel = new BroadcastChannel(this.name);
    this.channel = channel;
    channel.onmessage = (event: MessageEvent<Message>) => {
      this.work = this.work.then(() => this.handle(event.data)).catch((error: unknown) => console.error(error));
    };
    const tick = setInterval(() => this.tick(), BEAT_MS);
    const shownAgain = () => this.tick();
    const leaving = () => (this.role === 'leader' ? this.resign() : undefined);
    document.addEventListener('visibilitychange', shownAgain);
    addEventListener('pagehide', leaving);
    this.say({ kind: 'connecting' });
    if (hidden()) this.say({ kind: 'hidden' });
    else this.claim();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    clearInterval(tick);
    document.removeEventListener('visibilitychange', shownAgain);
    removeEventListener('pagehide', leaving);
  }

  private post(message: Message): void {
    if (!this.abort.signal.aborted) this.channel?.postMessage(message);
  }

  /** The state shown, told only when it changes (a beat a second would render the page a second). */
  private say(state: FeedState): void {
    const words = JSON.stringify(state);
    if (words === this.said) return;
    this.said = words;
    this.onState(state);
  }

  /** Each BEAT_MS, and when the tab is shown or hidden: the leader beats; a follower without a leader claims, if shown. */
  private tick(): void {
    if (this.abort.signal.aborted) return;
    if (this.role === 'leader') return this.post({ kind: 'beat', from: this.me, state: this.ownState });
    if (this.role !== 'follower' || Date.now() - this.heardAt <= SILENT_MS) return;
    if (hidden()) this.say({ kind: 'hidden' });
    else this.claim();
  }

  private claim(): void {
    this.role = 'candidate';
    this.post({ kind: 'claim', from: this.me });
    setTimeout(() => (this.role === 'candidate' && !this.abort.signal.aborted ? this.lead() : undefined), CLAIM_MS);
  }

  private async handle(message: Message): Promise<void> {
    if (this.abort.signal.aborted || message.from === this.me) return;
    switch (message.kind) {
      case 'beat':
        // Two leaders for a moment (claims crossed): the lower id leads on.
        if (this.role === 'leader' && message.from > this.me) return;
        if (this.role === 'leader') this.stepDown();
        this.role = 'follower';
        this.heardAt = Date.now();
        return this.say(message.state);
      case 'claim':
        if (this.role === 'leader') this.tick();
        else if (this.role === 'candidate' && message.from < this.me) {
          this.role = 'follower';
          this.heardAt = Date.now();
        }
        return;
      case 'resign':
        if (this.role !== 'follower') return;
        this.heardAt = 0;
        return this.tick();
      case 'frame':
        if (this.role === 'leader') return;
        this.role = 'follower';
        this.heardAt = Date.now();
        return this.follow(message);
      case 'stopped':
        if (this.role === 'leader') return;
        this.say({ kind: 'stopped', reason: message.reason });
        this.stop();
        // This tab asks with its own token: refused (401), the client signs this tab out too, saying why.
        await this.client.GET('/token');
    }
  }

  /** A relayed frame: what this tab lacks before it read first, an event it had already not taken again. */
  private async follow(frame: Extract<Message, { kind: 'frame' }>): Promise<void> {
    const before = frame.change === undefined ? frame.id : frame.after;
    if (this.last !== undefined && before !== undefined && before !== this.last && !this.seen.has(frame.id)) await this.catchUp(before);
    if (frame.change === undefined) this.last = frame.id;
    else this.take(frame.change);
  }

  /** Reads the events after this tab's place up to `until` (or to the newest), as pages of GET /events. */
  private async catchUp(until: string): Promise<void> {
    try {
      for (;;) {
        const { data, error } = await this.client.GET('/events', {
          params: { query: { ...(this.last !== undefined && { after: this.last }), limit: PAGE } },
        });
        // Gone past the retention, or refused: the leader's place is taken, as a stream of this tab's would after a 410.
        if (error !== undefined) return;
        for (const event of data) {
          this.take(changeOf(event.id, event));
          if (event.id === until) return;
        }
        if (data.length < PAGE) return;
      }
    } catch {
      // No answer: the leader's place is taken; the gap is the network's.
    }
  }

  private take(change: Change): void {
    if (this.seen.has(change.id)) return;
    this.last = change.id;
    this.seen.add(change.id);
    if (this.seen.size > SEEN_KEPT) this.seen.delete(this.seen.values().next().value!);
    this.onChange(change);
  }

  /** Leads: follows the feed after this tab's place, relaying each frame and state. */
  private lead(): void {
    this.role = 'leader';
    this.ownState = { kind: 'connecting' };
    const own = new ChangeFeed(
      this.client,
      (change) => {
        this.post({ kind: 'frame', from: this.me, after: this.last, id: change.id, change });
        this.take(change);
      },
      (state) => this.leading(state),
      this.last,
      (id) => {
        this.post({ kind: 'frame', from: this.me, after: this.last, id });
        this.last = id;
      },
    );
    this.own = own;
    this.tick();
    void own.run();
  }

  private leading(state: FeedState): void {
    if (this.role !== 'leader') return;
    // Hidden a while, the leader's stream ended: another tab, shown, leads.
    if (state.kind === 'hidden') {
      this.resign();
      return this.say(state);
    }
    this.ownState = state;
    this.say(state);
    if (state.kind === 'stopped') {
      this.post({ kind: 'stopped', from: this.me, reason: state.reason });
      this.stepDown();
      return this.stop();
    }
    this.tick();
  }

  private stepDown(): void {
    this.own?.stop();
    this.own = undefined;
    this.role = 'follower';
  }

  private resign(): void {
    this.stepDown();
    this.heardAt = 0;
    this.post({ kind: 'resign', from: this.me });
  }
}
