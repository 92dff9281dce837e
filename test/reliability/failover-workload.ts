import assert from 'node:assert/strict';
import pg from 'pg';
import { request, type ServerProcess } from '../process.js';
import { check, writer, type Answer, type Known, type Plant } from './crash-workload.js';
import { sleep, until } from '../toolkit.js';

/**
 * The failover tests' workload and checks: clients write at full speed (the crash tests' writers) and
 * /readyz is polled while the primary dies and another server takes its place; then the service must
 * have answered only 200 and 503, none later than DB_TIMEOUT_MS, be back soon after the new primary
 * takes writes, and the new primary must hold every acknowledged plant exactly.
 */

const WRITERS = 12;
/** Acknowledged writes before the primary is killed, and again after the new one takes writes. */
const WRITES_EACH_SIDE = 300;

export interface FailoverRun {
  known: Map<string, Known>;
  answers: Answer[];
  readiness: Array<{ status: number; at: number }>;
  killedAt: number;
  /** When the new primary took writes, as the test saw it. */
  promotedAt: number;
}

/** Writes through a failover: `failover` kills the primary and resolves once a new one takes writes. */
export async function writeThroughFailover(service: ServerProcess, failover: () => Promise<void>): Promise<FailoverRun> {
  const known = new Map<string, Known>();
  const answers: Answer[] = [];
  const readiness: FailoverRun['readiness'] = [];
  const stop = { now: false };
  const polling = (async () => {
    while (!stop.now) {
      const { status } = await request(`${service.url}/readyz`);
      readiness.push({ status, at: Date.now() });
      await sleep(100);
    }
  })();
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(service, 1, w, known, stop, (answer) => answers.push(answer)));
  const acked = (since: number) => answers.filter((a) => a.status !== 503 && a.at > since).length;
  try {
    await until(() => acked(0) >= WRITES_EACH_SIDE, 'writes to be acknowledged', { timeoutMs: 60_000 });
    const killedAt = Date.now();
    await failover();
    const promotedAt = Date.now();
    await until(() => acked(promotedAt) >= WRITES_EACH_SIDE, 'writes to be acknowledged by the new primary', { timeoutMs: 60_000 });
    return { known, answers, readiness, killedAt, promotedAt };
  } finally {
    stop.now = true;
    await Promise.all([...writers, polling]);
  }
}

/**
 * The service rode through: only 200/201 (writer() fails on anything else) and 503, some 503 while there
 * was no primary, none waiting longer than DB_TIMEOUT_MS (plus a loaded machine's seconds), writes acknowledged
 * again within DB_TIMEOUT_MS plus ten seconds of the promotion, /readyz 503 during the switch and 200
 * after. Returns the figures, for the test's diagnostic.
 */
export function assertRodeThrough(run: FailoverRun, dbTimeoutMs: number): string {
  const { answers, readiness, killedAt, promotedAt } = run;
  const unavailable = answers.filter((a) => a.status === 503);
  assert.ok(
    unavailable.some((a) => a.at > killedAt && a.at < promotedAt),
    'requests during the switch are answered 503',
  );
  // The bounds are the point, and generous for a loaded machine: a request waits DB_TIMEOUT_MS at most, and
  // the tests leave no primary for longer than that plus 4 s, so one that waited for the promotion shows;
  // writes resume within seconds of it, where a service that had to be restarted, or looked for the new
  // primary once a minute, would not.
  const slowest = Math.max(...answers.map((a) => a.ms));
  assert.ok(slowest <= dbTimeoutMs + 4000, `a request waited ${slowest} ms (DB_TIMEOUT_MS ${dbTimeoutMs})`);
  const firstAfter = Math.min(...answers.filter((a) => a.status !== 503 && a.at > promotedAt).map((a) => a.at)) - promotedAt;
  assert.ok(firstAfter <= dbTimeoutMs + 10_000, `first write acknowledged ${firstAfter} ms after the promotion`);

  assert.deepEqual([...new Set(readiness.map((r) => r.status))].sort(), [200, 503]);
  assert.ok(
    readiness.some((r) => r.status === 503 && r.at > killedAt && r.at < promotedAt),
    '/readyz 503 during the switch',
  );
  assert.equal(readiness.at(-1)?.status, 200, '/readyz 200 after the switch');

  const ackedBefore = answers.filter((a) => a.status !== 503 && a.at <= killedAt).length;
  const ackedAll = answers.filter((a) => a.status !== 503).length;
  return (
    `${ackedBefore} writes acknowledged before the kill, ${ackedAll} in all; new primary taking writes ${promotedAt - killedAt} ms after the kill; ` +
    `first write acknowledged ${firstAfter} ms after that; ${unavailable.length} answers 503, the slowest answer ${slowest} ms`
  );
}

/** Every acknowledged plant is on the server at `url` with exactly its content, and no plant nobody wrote. */
export async function assertAllOn(url: string, known: Map<string, Known>): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let rows: Array<{ id: string; name: string; tag: string | null }>;
  try {
    rows = (await client.query<{ id: string; name: string; tag: string | null }>('SELECT id::text AS id, name, tag FROM plants')).rows;
  } finally {
    await client.end();
  }
  const stored = new Map<string, Plant>(rows.map(({ id, name, tag }) => [id, tag === null ? { name } : { name, tag }]));
  const { lostOrWrong, unknown } = check(stored, known);
  assert.deepEqual(lostOrWrong.slice(0, 10), [], `${lostOrWrong.length} acknowledged writes lost or changed`);
  assert.deepEqual(unknown, [], 'plants nobody wrote');
  return stored.size;
}
