import pg from 'pg';
import type { PostgresUrl, SessionAttrs } from './url.js';
import { finalRefusal, sessionRole, UnwantedSessionError, WANTED, type SessionRole } from './sessions.js';

/**
 * Several PostgreSQL hosts, one of which is wanted (the writable primary, usually): which host a new
 * connection goes to, and how it checks that the session it got is the kind target_session_attrs asks
 * for. Every new pooled connection goes through this, so after a failover (the primary gone, a standby
 * promoted) the pool finds the new primary by itself: connections to the dead host fail and are dropped,
 * the next host is tried, a standby is refused by the check, and the promoted server is kept as the host
 * to try first from then on.
 */

/** After a whole pass over the hosts without the session wanted (mid-failover), attempts pause this long. */
const PASS_PAUSE_MS = 200;

/** No connection to a wanted session in time: no host gave one, or the pool's connections were all busy. */
export class NoSessionError extends Error {
  constructor(hosts: Hosts, ms: number) {
    // The last attempt's failure says why (a standby where the primary is asked for, a refused password):
    // the deadline may fall while a later attempt is still on its way, which would otherwise hide it.
    const last = hosts.lastFailure === undefined ? '' : ` (last attempt: ${hosts.lastFailure})`;
    super(`no connection to a ${hosts.attrs} session on ${hosts.labels.join(', ')} within ${ms} ms${last}`);
    this.name = 'NoSessionError';
  }
}

/** Errors of connection attempts to one host: another host (or the same, later) may do better. */
const hostFailures = new WeakSet<object>();

/**
 * The hosts of one URL, and which one a new connection tries: the host that last gave a wanted session,
 * else the next one after the host that last failed, in the order the URL lists them.
 */
export class Hosts {
  private preferred = 0;
  /** The hosts whose last attempt was refused for good (finalRefusal). */
  private readonly refusedForGood = new Set<number>();
  /** Why the last failed attempt failed, as its error said. */
  lastFailure: string | undefined;
  /** How long one host may take to give a session. */
  readonly perHostMs: number;

  constructor(
    readonly url: PostgresUrl,
    readonly attrs: SessionAttrs,
    timeoutMs: number,
  ) {
    // connect_timeout when the URL sets it (libpq's per-host limit); else an equal share of the timeout, so
    // that a host that swallows packets cannot use up the time of the hosts after it.
    this.perHostMs = Math.min(timeoutMs, url.connectTimeoutMs ?? Math.ceil(timeoutMs / url.hosts.length));
  }

  get labels(): string[] {
    return this.url.hosts.map((host) => host.label);
  }

  /** The host a new connection goes to. */
  next(): number {
    return this.preferred;
  }

  succeeded(index: number): void {
    this.preferred = index;
    this.refusedForGood.delete(index);
  }

  /**
   * Records how host `index` refused (`final`: for good), and says whether every host has now refused for
   * good: only then would another attempt not change the answer. A host that failed otherwise since
   * (unreachable, starting up) may yet be the one to give a session.
   */
  refusedByAll(index: number, final: boolean): boolean {
    if (final) this.refusedForGood.add(index);
    else this.refusedForGood.delete(index);
    return this.refusedForGood.size === this.url.hosts.length;
  }

  /** Hands the turn to the next host, unless another connection has moved it on already. */
  failed(index: number, error?: unknown): void {
    if (error !== undefined) this.lastFailure = error instanceof Error ? error.message : typeof error === 'string' ? error : 'unknown error';
    if (this.preferred === index) this.preferred = (index + 1) % this.url.hosts.length;
  }

  wants(role: SessionRole): boolean {
    return WANTED[this.attrs](role);
  }
}

export interface HostClientConfig extends pg.ClientConfig {
  hosts: Hosts;
}

/**
 * A pg Client on the host `hosts` chooses, whose connect also checks the session's role and tells `hosts`
 * how it went. Made by FailoverPool for each new connection, and by the migrator.
 */
export class HostClient extends pg.Client {
  readonly hostLabel: string;
  private readonly index: number;
  private readonly hosts: Hosts;

  constructor(config: HostClientConfig) {
    const { hosts, ...rest } = config;
    const index = hosts.next();
    super({ ...rest, connectionString: hosts.url.hosts[index]!.url, connectionTimeoutMillis: hosts.perHostMs });
    this.hosts = hosts;
    this.index = index;
    this.hostLabel = hosts.url.hosts[index]!.label;
    // pg's pool listens for errors on idle connections only. A server that dies sends its last message
    // ("terminating connection due to unexpected postmaster exit") whenever it likes, to a connection in
    // use too: without a listener that would be an uncaught 'error' event, the end of the process. The
    // error reaches whoever holds the connection through its next statement, which then fails.
    this.on('error', () => undefined);
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
  override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
    const connecting = this.connectWanted();
    if (!callback) return connecting;
    const done = callback as (err: Error | null, c?: pg.Client) => void;
    connecting.then(
      (client) => done(null, client),
      (error: Error) => done(error),
    );
  }

  private async connectWanted(): Promise<pg.Client> {
    const started = Date.now();
    let connected = false;
    try {
      await super.connect();
      connected = true;
      if (this.hosts.attrs !== 'any') {
        const role = await sessionRole(this, this.hosts.perHostMs - (Date.now() - started));
        if (!this.hosts.wants(role)) throw new UnwantedSessionError(this.hostLabel, this.hosts.attrs, role);
      }
    } catch (error) {
      // A session that is not wanted, or did not say what it is in time, is closed here: whoever asked for
      // it (pg's pool, the migrator) gets only the error.
      if (connected) await this.end().catch(() => undefined);
      this.hosts.failed(this.index, error);
      if (typeof error === 'object' && error !== null && !this.hosts.refusedByAll(this.index, finalRefusal(error))) hostFailures.add(error);
      throw error;
    }
    this.hosts.succeeded(this.index);
    return this;
  }
}

/** The host a client is connected to, as a person reads it. */
export function hostOf(client: pg.Client): string {
  return client instanceof HostClient ? client.hostLabel : `${client.host}:${client.port}`;
}

/**
 * Connects by `attempt` until it gives a session or the deadline passes. Each failed attempt has moved
 * `hosts` on to the next host; after a whole pass without the session wanted, the next waits a little,
 * so that a cluster in the middle of a failover is not flooded with connections.
 */
export async function untilConnected<T>(hosts: Hosts, deadline: number, attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (typeof error !== 'object' || error === null || !hostFailures.has(error)) throw error;
      const pause = tries % hosts.url.hosts.length === 0 ? PASS_PAUSE_MS : 0;
      if (Date.now() + pause >= deadline) throw error;
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * `pending`, or a NoSessionError once the deadline passes; what `pending` gives after that is handed to
 * `discard` (a pooled client back to its pool), so that nothing leaks.
 */
export function withinDeadline<T>(hosts: Hosts, pending: Promise<T>, deadline: number, ms: number, discard: (late: T) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(
      () => {
        late = true;
        reject(new NoSessionError(hosts, ms));
      },
      Math.max(0, deadline - Date.now()),
    );
    pending.then(
      (value) => {
        clearTimeout(timer);
        if (late) discard(value);
        else resolve(value);
      },
      (error: Error) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}

/**
 * A pg Pool whose every new connection is a HostClient, and whose connect gives up at a deadline (by
 * default `timeoutMs` from the call) however many hosts it tries on the way. Connections that broke (their
 * server died) are dropped by pg's pool as before; the next one goes through the host choice again.
 */
export class FailoverPool extends pg.Pool {
  constructor(
    readonly hosts: Hosts,
    config: pg.PoolConfig,
    private readonly timeoutMs: number,
  ) {
    // pg's pool hands its options to every client it makes: `hosts` reaches each HostClient that way.
    super({ ...config, Client: HostClient as unknown as new () => pg.ClientBase, hosts } as pg.PoolConfig);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(
    callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<pg.PoolClient> | void {
    const connecting = this.connectBy(Date.now() + this.timeoutMs);
    if (!callback) return connecting;
    connecting.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }

  /** A connection to a wanted session by `deadline` (epoch ms), or the error of the last attempt / a NoSessionError. */
  connectBy(deadline: number): Promise<pg.PoolClient> {
    const ms = Math.max(0, deadline - Date.now());
    return untilConnected(this.hosts, deadline, () => withinDeadline(this.hosts, super.connect(), deadline, ms, (client) => client.release()));
  }
}

/** A single client on a wanted session (the migrator's), by `deadline`. */
export function connectClient(hosts: Hosts, config: pg.ClientConfig, deadline: number): Promise<HostClient> {
  const ms = Math.max(0, deadline - Date.now());
  return untilConnected(hosts, deadline, () => {
    const client = new HostClient({ ...config, hosts });
    return withinDeadline(
      hosts,
      client.connect().then(() => client),
      deadline,
      ms,
      (late) => void late.end().catch(() => undefined),
    );
  });
}
