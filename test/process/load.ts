import { connect } from 'node:net';
import type { after } from 'node:test';
import { EventSource } from 'eventsource';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * Steady load on a service while it is reloaded or stopped, and what a test then checks: every request
 * answered as expected (no connection error, no 5xx), every acknowledged plant read back as acknowledged,
 * every event delivered once to a consumer that resumes with Last-Event-ID, and new connections never
 * refused. Clients keep their connections alive in a pool, as real ones do (undici, as Node's fetch), and
 * drop them when closed, as real ones do in the end: a reload's old worker exits once its clients have.
 */

/** An HTTP client with a pool of keep-alive connections of its own. */
export interface Client {
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /** Drops its connections, once what it has in flight is answered. */
  close(): Promise<void>;
}

export function client(): Client {
  const agent = new Agent();
  return {
    fetch: (url, init) => undiciFetch(url, { ...(init as object), dispatcher: agent }),
    close: () => agent.close(),
  };
}

export interface LoadSummary {
  requests: number;
  /** Each request that failed, and how. */
  failures: string[];
  /** Every plant the service answered 200 for, by id: its body as answered. */
  acknowledged: Map<string, string>;
}

export interface Load {
  /** Requests answered so far. */
  requests(): number;
  stop(): Promise<LoadSummary>;
}

/**
 * `clients` loops, each sending one request after another on its own: a plain POST, a POST with an
 * Idempotency-Key, a GET of a plant acknowledged before; ids made from the loop and its count.
 */
export function startLoad(url: string, token: string, http: Client, clients = 8): Load {
  const failures: string[] = [];
  const acknowledged = new Map<string, string>();
  let requests = 0;
  let stopping = false;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const loop = async (client: number) => {
    for (let n = 0; !stopping; n++) {
      const id = String(BigInt(client + 1) * 1_000_000_000n + BigInt(n));
      const known = [...acknowledged.keys()];
      const kind = n % 3;
      const what = kind === 2 && known.length > 0 ? `GET ${known[n % known.length]}` : `POST ${id}${kind === 1 ? ' keyed' : ''}`;
      try {
        if (what.startsWith('GET')) {
          const response = await http.fetch(`${url}/plants/${known[n % known.length]}`, { headers });
          const text = await response.text();
          if (response.status !== 200) failures.push(`${what}: ${response.status} ${text}`);
        } else {
          const body = `{"id":${id},"name":"plant ${client}-${n}","tag":"load"}`;
          const response = await http.fetch(`${url}/plants`, {
            method: 'POST',
            headers: kind === 1 ? { ...headers, 'idempotency-key': `load-${id}` } : headers,
            body,
          });
          const text = await response.text();
          if (response.status === 200) acknowledged.set(id, text);
          else failures.push(`${what}: ${response.status} ${text}`);
        }
      } catch (error) {
        failures.push(`${what}: ${(error as Error).message} (${String((error as { cause?: { code?: string } }).cause?.code ?? '')})`);
      }
      requests++;
    }
  };
  const loops = Array.from({ length: clients }, (_, client) => loop(client));
  return {
    requests: () => requests,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      return { requests, failures, acknowledged };
    },
  };
}

/** Every acknowledged plant that does not read back as it was answered. */
export async function missing(url: string, token: string, acknowledged: Map<string, string>): Promise<string[]> {
  const wrong: string[] = [];
  for (const [id, body] of acknowledged) {
    const response = await fetch(`${url}/plants/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    const expected = `{"id":${id},${body.slice(1)}`;
    if (response.status !== 200 || text !== expected) wrong.push(`${id}: ${response.status} ${text}, acknowledged ${body}`);
  }
  return wrong;
}

/** Every event id of the feed after `after` (the consumer's start), read as pages. */
export async function feedIds(url: string, token: string, after: string): Promise<string[]> {
  const ids: string[] = [];
  for (let next: string | undefined = `${url}/events?limit=1000&after=${after}`; next !== undefined;) {
    const response = await fetch(next, { headers: { authorization: `Bearer ${token}` } });
    const page = (await response.json()) as Array<{ id: string }>;
    ids.push(...page.map((event) => event.id));
    const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    next = link === undefined ? undefined : new URL(link, url).href;
  }
  return ids;
}

export interface Consumer {
  /** The ids of the events it received, in order. */
  received: string[];
  /** The feed's last event when it started: it receives every event after it. */
  startedAfter: string;
  close(): void;
}

/** An EventSource consumer of the feed, through `http` (it reconnects by itself, with Last-Event-ID). */
export async function consumer(cleanup: typeof after, url: string, token: string, http: Client): Promise<Consumer> {
  const authorization = `Bearer ${token}`;
  const head = (await (await http.fetch(`${url}/events?limit=1000`, { headers: { authorization } })).json()) as Array<{ id: string }>;
  const startedAfter = head.at(-1)?.id ?? 'msg_00000000000000000000000000';
  const source = new EventSource(`${url}/events?after=${startedAfter}`, {
    fetch: (input, init) => http.fetch(String(input), { ...init, headers: { ...init.headers, authorization } }),
  });
  const received: string[] = [];
  for (const type of ['plant.created', 'plant.updated', 'plant.deleted']) {
    source.addEventListener(type, (event: MessageEvent) => received.push(event.lastEventId));
  }
  cleanup(() => source.close());
  return { received, startedAfter, close: () => source.close() };
}

/** Opens a new TCP connection every `everyMs` until stopped: how many, and how many were refused or reset. */
export function connectProbe(port: number, everyMs = 20): { stop(): Promise<{ opened: number; refused: string[] }> } {
  let stopping = false;
  let opened = 0;
  const refused: string[] = [];
  const done = (async () => {
    while (!stopping) {
      await new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          opened++;
          socket.destroy();
          resolve();
        });
        socket.once('error', (error: NodeJS.ErrnoException) => {
          refused.push(error.code ?? error.message);
          resolve();
        });
      });
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      stopping = true;
      await done;
      return { opened, refused };
    },
  };
}

/** Scrapes the metrics listener one after another until stopped: how many, and every one that failed. */
export function scrapeProbe(url: string): { stop(): Promise<{ scrapes: number; failed: string[] }> } {
  let stopping = false;
  let scrapes = 0;
  const failed: string[] = [];
  const done = (async () => {
    while (!stopping) {
      try {
        const response = await fetch(url);
        const text = await response.text();
        if (response.status !== 200 || !text.includes('http_requests_total')) failed.push(`${response.status} ${text.slice(0, 200)}`);
      } catch (error) {
        failed.push((error as Error).message);
      }
      scrapes++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      stopping = true;
      await done;
      return { scrapes, failed };
    },
  };
}
