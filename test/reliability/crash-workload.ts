import assert from 'node:assert/strict';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import { request, type ServerProcess } from '../process.js';
import { sleep } from '../toolkit.js';

/**
 * The crash tests' workload: clients writing plants at full speed (creates and replacements) against a
 * real server process, remembering what each answer acknowledged, and the check made after a crash.
 */

export const TOKEN = 'crash-test-token-0123456789abcdefg';
export const WRITERS = 24;

export interface Plant {
  name: string;
  tag?: string;
}

/** What the client knows of one id: the last acknowledged content, and a write in flight at the kill. */
export interface Known {
  acked?: Plant;
  inFlight?: Plant;
}

export async function allPlants(server: ServerProcess): Promise<Map<string, Plant>> {
  const plants = new Map<string, Plant>();
  let afterId: string | undefined;
  for (;;) {
    const page = await request(`${server.url}/plants?limit=1000${afterId === undefined ? '' : `&after=${afterId}`}`, { token: TOKEN });
    assert.equal(page.status, 200, page.text);
    // ids here stay below 2^53: JSON.parse is exact for them.
    const rows = JSON.parse(page.text) as Array<{ id: number } & Plant>;
    for (const { id, ...plant } of rows) plants.set(String(id), plant);
    if (!page.headers.get('link')) return plants;
    afterId = String(rows.at(-1)!.id);
  }
}

/** One answer to a write, for tests that look at more than the end state (failover: when, and which statuses). */
export interface Answer {
  status: number;
  id: string;
  plant: Plant;
  /** When the answer came, and how long it took (epoch ms, ms). */
  at: number;
  ms: number;
}

/** One writer: creates plants of its own, and now and then replaces one it created, until the server dies. */
export async function writer(
  server: ServerProcess,
  round: number,
  w: number,
  known: Map<string, Known>,
  stop: { now: boolean },
  answered?: (answer: Answer) => void,
): Promise<number> {
  let acked = 0;
  const mine: string[] = [];
  for (let n = 0; !stop.now; n++) {
    const replace = mine.length > 0 && n % 4 === 3;
    const id = replace ? mine[n % mine.length]! : String(round * 10_000_000 + w * 100_000 + n);
    const plant: Plant = n % 3 === 0 ? { name: `r${round} w${w} n${n}` } : { name: `r${round} w${w} n${n}`, tag: `t${n % 7}` };
    const entry = known.get(id) ?? {};
    known.set(id, entry);
    entry.inFlight = plant;
    let status: number;
    const sent = Date.now();
    try {
      const method = replace ? 'PUT' : 'POST';
      const url = replace ? `${server.url}/plants/${id}` : `${server.url}/plants`;
      const body = JSON.stringify(replace ? plant : { id: Number(id), ...plant });
      status = (await request(url, { method, token: TOKEN, body })).status;
    } catch {
      return acked; // the server is gone; this write stays in flight
    }
    answered?.({ status, id, plant, at: Date.now(), ms: Date.now() - sent });
    if (status === 503) {
      // Not carried out (the store is down, or load is shed): the write stays "maybe"; go on after a pause.
      await sleep(20);
      continue;
    }
    assert.ok(status === 200 || status === 201, `write answered ${status}`);
    entry.acked = plant;
    delete entry.inFlight;
    if (!replace) mine.push(id);
    acked++;
  }
  return acked;
}

export function check(stored: Map<string, Plant>, known: Map<string, Known>): { lostOrWrong: string[]; unknown: string[] } {
  const lostOrWrong: string[] = [];
  for (const [id, { acked, inFlight }] of known) {
    const got = stored.get(id);
    const ok = [acked, inFlight].some((p) =>
      p === undefined ? got === undefined && acked === undefined : JSON.stringify(got) === JSON.stringify(p),
    );
    if (!ok) lostOrWrong.push(`${id}: stored ${JSON.stringify(got)}, acknowledged ${JSON.stringify(acked)}, in flight ${JSON.stringify(inFlight)}`);
  }
  const unknown = [...stored.keys()].filter((id) => !known.has(id));
  return { lostOrWrong, unknown };
}

/** After a restart: every acknowledged write is there exactly; what was in flight is now settled. */
export async function verifyAfterCrash(server: ServerProcess, known: Map<string, Known>): Promise<number> {
  const stored = await allPlants(server);
  const { lostOrWrong, unknown } = check(stored, known);
  assert.deepEqual(lostOrWrong.slice(0, 10), [], `${lostOrWrong.length} acknowledged writes lost or changed`);
  assert.deepEqual(unknown.slice(0, 10), [], 'plants nobody wrote');
  // What the kill left of the writes in flight is now known: later rounds hold it to that.
  for (const [id, entry] of known) {
    if (entry.inFlight === undefined) continue;
    if (JSON.stringify(stored.get(id)) === JSON.stringify(entry.inFlight)) entry.acked = entry.inFlight;
    delete entry.inFlight;
  }
  return stored.size;
}

export function sqliteIntegrity(file: string): string {
  const db = openConnection(file, { readonly: true });
  try {
    return prepare(db, 'PRAGMA integrity_check').pluck().get() as string;
  } finally {
    db.close();
  }
}
