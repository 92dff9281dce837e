import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse, parseNumberAndBigInt } from 'lossless-json';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import { tempDir } from '../helpers.js';
import { killService } from '../process/supervised.js';
import { request, startServer, type ServerProcess } from '../process.js';
import { sqliteIntegrity, TOKEN, verifyAfterCrash, writer, WRITERS, type Known } from './crash-workload.js';
import { sleep, until } from '../toolkit.js';

/**
 * Data outlives the process: across a graceful restart every plant comes back exactly, ids beyond 2^53
 * included; and every write answered 200 survives SIGKILL. Once, with plain and big ids and the search index
 * catching up after the restart; then at full speed (creates and replacements), with the service (the
 * supervisor and its worker) killed at a random moment, several rounds in a row, restarting in between.
 * After each restart every write answered 200/201 is there with exactly the acknowledged content (a write
 * in flight at the kill may or may not be), nothing never sent is there, PRAGMA integrity_check is ok, and
 * the service started on its own. CRASH_ROUNDS sets the rounds (default 3).
 */
interface Sent {
  id: bigint;
  name: string;
  tag?: string;
}

function body(plant: Sent): string {
  return `{"id":${plant.id},"name":${JSON.stringify(plant.name)}${plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`}}`;
}

/** Every plant, all pages, parsed with ids as exact bigints. */
async function everyPage(server: ServerProcess): Promise<{ plants: Sent[]; texts: string[] }> {
  const plants: Sent[] = [];
  const texts: string[] = [];
  let after: bigint | undefined;
  for (;;) {
    const page = await request(`${server.url}/plants?limit=1000${after === undefined ? '' : `&after=${after}`}`, { token: TOKEN });
    assert.equal(page.status, 200, page.text);
    texts.push(page.text);
    const rows = parse(page.text, null, parseNumberAndBigInt) as { id: bigint | number; name: string; tag?: string }[];
    for (const row of rows) plants.push({ ...row, id: BigInt(row.id) });
    if (!page.headers.get('link')) return { plants, texts };
    after = plants.at(-1)!.id;
  }
}

test('a restart keeps every plant exactly, ids beyond 2^53 included', async () => {
  const dir = tempDir(after);
  const env = { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: TOKEN };
  const sent: Sent[] = [
    { id: -9223372036854775808n, name: 'lowest' },
    { id: -9007199254740993n, name: 'below -2^53', tag: 'neg' },
    { id: 0n, name: 'zero' },
    { id: 1n, name: 'Monstera deliciosa', tag: 'aroid' },
    { id: 9007199254740993n, name: '2^53 + 1', tag: 'big' },
    { id: 9223372036854775806n, name: 'üñíçødé 🌱 "quoted"', tag: 'big' },
    { id: 9223372036854775807n, name: 'highest', tag: 'big' },
  ];
  const first = await startServer(after, { env });
  for (const plant of sent) {
    const answer = await request(`${first.url}/plants`, { method: 'POST', token: TOKEN, body: body(plant) });
    assert.equal(answer.status, 200, answer.text);
  }
  assert.deepEqual(await first.stop('SIGTERM'), { code: 0, signal: null });

  const second = await startServer(after, { env });
  const { plants, texts } = await everyPage(second);
  assert.deepEqual(plants, sent);
  for (const plant of sent) {
    // Written back as plain JSON integers: no quotes, no exponent, every digit.
    assert.ok(texts.join('').includes(`"id":${plant.id},`), `id ${plant.id} exact in the raw list`);
    const one = await request(`${second.url}/plants/${plant.id}`, { token: TOKEN });
    assert.equal(one.status, 200);
    assert.equal(one.text, body(plant));
  }
  assert.deepEqual(await second.stop('SIGTERM'), { code: 0, signal: null });
});

test('every plant answered 200 is still there, exactly, after the process is killed with SIGKILL', async () => {
  const dir = tempDir(after);
  const env = { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: TOKEN };
  const server = await startServer(after, { env });

  const acknowledged = new Map<bigint, Sent>();
  const attempted = new Map<bigint, Sent>();
  let next = 0n;
  let killed = false;
  const WORKERS = 16;
  const KILL_AFTER = 300;
  // Each worker posts distinct plants back to back until the server is gone; ids alternate between
  // small ones and ones beyond 2^53, so exactness is checked under load too.
  const worker = async (w: number) => {
    for (;;) {
      const n = next++;
      const plant: Sent = { id: n % 2n === 0n ? n : 9007199254740993n + n, name: `plant ${n} of worker ${w}` };
      if (n % 3n === 0n) plant.tag = `t${n % 7n}`;
      attempted.set(plant.id, plant);
      let status: number;
      try {
        status = (await request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body: body(plant) })).status;
      } catch {
        if (killed) return;
        throw new Error(`POST failed before the kill\nstderr: ${server.stderr}`);
      }
      if (status === 200) acknowledged.set(plant.id, plant);
      else if (!killed) throw new Error(`POST answered ${status} before the kill`);
      if (killed) return;
      if (acknowledged.size >= KILL_AFTER && !killed) {
        killed = true;
        server.signal('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  assert.deepEqual(await server.exited, { code: null, signal: 'SIGKILL' });
  assert.ok(acknowledged.size >= KILL_AFTER);

  const restarted = await startServer(after, { env });
  const { plants } = await everyPage(restarted);
  const stored = new Map(plants.map((plant) => [plant.id, plant]));
  for (const [id, plant] of acknowledged) assert.deepEqual(stored.get(id), plant, `acknowledged plant ${id} is stored exactly`);
  // Nothing appears that was never sent (a write in flight at the kill may or may not be there).
  for (const [id, plant] of stored) assert.deepEqual(attempted.get(id), plant, `stored plant ${id} was sent as is`);

  // Search, whose index follows the writes after they commit: every acknowledged plant is found by its
  // name at once after the restart (the index read besides what it has not caught up with), and the
  // index catches up with what the killed process left unindexed.
  const names = new Set([...stored.values()].map((plant) => plant.name));
  for (const plant of [...acknowledged.values()].filter((_, i) => i % 10 === 0)) {
    const found = await request(`${restarted.url}/plants?q=${encodeURIComponent(plant.name)}&limit=1000`, { token: TOKEN });
    const ids = (parse(found.text, null, parseNumberAndBigInt) as { id: bigint | number; name: string }[]).map((row) => BigInt(row.id));
    const holding = [...stored.values()].filter((other) => other.name.includes(plant.name)).map((other) => other.id);
    assert.deepEqual(ids.sort(), holding.sort(), `q=${plant.name}`);
  }
  const db = openConnection(join(dir, 'x.db'), { readonly: true });
  try {
    const behind = prepare(db, "SELECT (SELECT max(position) FROM events) - value FROM counters WHERE name = 'search_position'").pluck();
    await until(() => behind.get() === 0, 'the search index catches up after the restart', { timeoutMs: 10_000 });
    const indexed = prepare(db, 'SELECT count(*) FROM plants_search WHERE plants_search MATCH ?').pluck();
    assert.equal(indexed.get('"plant"'), names.size, 'every stored plant is in the index');
  } finally {
    db.close();
  }
  assert.deepEqual(await restarted.stop('SIGTERM'), { code: 0, signal: null });
});

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3);

test(`SIGKILL at a random moment, ${ROUNDS} rounds: every acknowledged write survives exactly`, { timeout: 10 * 60_000 }, async (t) => {
  const dir = tempDir(after);
  const file = join(dir, 'crash.db');
  const env = { DATABASE_URL: `file:${file}`, PLANT_STORE_TOKENS: TOKEN, LOG_LEVEL: 'info' };
  const known = new Map<string, Known>();
  let server = await startServer(after, { env });

  for (let round = 1; round <= ROUNDS; round++) {
    const stop = { now: false };
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(server, round, w, known, stop));
    // A random moment once writes flow: after at least a few hundred acknowledgements.
    const ackedSoFar = () => [...known.values()].filter((k) => k.acked?.name.startsWith(`r${round} `)).length;
    const started = Date.now();
    await until(() => ackedSoFar() >= 1000, 'writes to be acknowledged', { timeoutMs: 120_000 });
    await sleep(Math.floor(Math.random() * 1000));
    killService(server);
    const exit = await server.exited;
    stop.now = true;
    const acked = (await Promise.all(writers)).reduce((a, b) => a + b, 0);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(exit.signal, 'SIGKILL');
    const inFlight = [...known.values()].filter((k) => k.inFlight !== undefined).length;

    server = await startServer(after, { env });
    const storedCount = await verifyAfterCrash(server, known);
    assert.equal(sqliteIntegrity(file), 'ok');
    t.diagnostic(
      `round ${round}: ${acked} writes acknowledged in ${seconds.toFixed(1)} s (${WRITERS} clients), SIGKILL with ${inFlight} in flight; ` +
        `${storedCount} plants after restart, none lost or changed, integrity ok`,
    );
  }
  await server.stop('SIGTERM');
});
