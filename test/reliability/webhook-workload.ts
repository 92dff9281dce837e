import assert from 'node:assert/strict';
import { request, type ServerProcess } from '../process.js';
import { verify, type Receiver } from '../webhooks/receiver.js';
import { sleep } from '../toolkit.js';

/**
 * The webhook crash tests' workload: clients create and replace plants at full speed, remembering every
 * write the service acknowledged (each must be announced) and every write it may have carried out (in
 * flight at a kill, or answered 503), and the check that each acknowledged write's event reached the
 * receiver, verified, and that no event announces a write nobody made.
 */

export const TOKEN = 'webhook-crash-token-0123456789abcde';

/** A write as its event shows it: `type|id|name|tag`. */
export type WriteKey = string;

export interface Writes {
  acked: Set<WriteKey>;
  /** Sent but not acknowledged: may or may not have been carried out. */
  maybe: Set<WriteKey>;
}

function key(type: string, id: string, name: string, tag: string | undefined): WriteKey {
  return `${type}|${id}|${name}|${tag ?? ''}`;
}

export async function registerEndpoint(server: ServerProcess, url: string): Promise<string> {
  const res = await request(`${server.url}/webhooks`, { method: 'POST', token: TOKEN, body: JSON.stringify({ url }) });
  assert.equal(res.status, 201, res.text);
  return (JSON.parse(res.text) as { secret: string }).secret;
}

/** One client: creates plants of its own and now and then replaces one, until told to stop or the server is gone. */
export async function webhookWriter(url: () => string, prefix: string, writes: Writes, stop: { now: boolean }): Promise<number> {
  let acked = 0;
  const mine: string[] = [];
  for (let n = 0; !stop.now; n++) {
    const replace = mine.length > 0 && n % 4 === 3;
    const id = replace ? mine[n % mine.length]! : `${prefix}${String(n).padStart(6, '0')}`;
    const name = `${prefix} n${n}`;
    const tag = n % 3 === 0 ? undefined : `t${n % 5}`;
    const write = key(replace ? 'plant.updated' : 'plant.created', id, name, tag);
    writes.maybe.add(write);
    let status: number;
    try {
      const body = JSON.stringify(tag === undefined ? { id: Number(id), name } : { id: Number(id), name, tag });
      status = (await request(`${url()}/plants`, { method: 'POST', token: TOKEN, body })).status;
    } catch {
      await sleep(50); // the server is down: the write stays "maybe"
      continue;
    }
    if (status === 503) {
      await sleep(20);
      continue;
    }
    assert.equal(status, 200, `write answered ${status}`);
    writes.maybe.delete(write);
    writes.acked.add(write);
    if (!replace) mine.push(id);
    acked++;
  }
  return acked;
}

/** The writes the receiver's deliveries announce, each verified with standardwebhooks (once: deliveries are read as they come). */
export function announcements(receiver: Receiver, secret: string): () => Set<WriteKey> {
  const seen = new Set<WriteKey>();
  let read = 0;
  return () => {
    for (; read < receiver.received.length; read++) {
      const { type, data } = verify(secret, receiver.received[read]!);
      seen.add(key(type, String(data.id), String(data.name), data.tag as string | undefined));
    }
    return seen;
  };
}

/** Every acknowledged write announced, and nothing announced that was never written. */
export function assertAllAnnounced(writes: Writes, seen: Set<WriteKey>): void {
  const missing = [...writes.acked].filter((w) => !seen.has(w));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged writes were not announced`);
  const invented = [...seen].filter((w) => !writes.acked.has(w) && !writes.maybe.has(w));
  assert.deepEqual(invented.slice(0, 10), [], 'events for writes nobody made');
}
