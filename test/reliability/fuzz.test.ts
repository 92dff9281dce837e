import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { parse as parseLossless } from 'lossless-json';
import { listPlants, testApp, TOKEN, assertErrorShape } from '../helpers.js';
import { requestArb, type FuzzAuth, type FuzzRequest } from './fuzz-arbitraries.js';
import { FUZZING } from '../tier.js';

/**
 * Property-based fuzzing of every operation, in-process. Invariants, for every request however
 * malformed: no 5xx; an answer within a generous bound (no hang); every error in the Error shape as
 * application/json; every 2xx in the documented shape; and the store holds exactly what 2xx answers
 * acknowledged (a model of the store is kept beside it and compared as the run goes).
 * FUZZ_RUNS sets the number of cases (default 5000); FUZZ_SEED replays a run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** Far beyond any real answer time; only a wedged request comes near it. */
const HANG_MS = 15_000;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

interface ModelPlant {
  name: string;
  tag?: string;
}

/** JSON with every integer as bigint, so that ids compare exactly. */
function parseExact(text: string): unknown {
  return parseLossless(text, null, {
    parseNumber: (n: string) => (/^-?\d+$/.test(n) ? BigInt(n) : Number(n)),
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

function asId(value: unknown): bigint {
  if (typeof value === 'bigint') return value === -0n ? 0n : value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  throw new Error(`not an id: ${String(value)}`);
}

function assertPlantFields(body: Record<string, unknown>, allowed: string[], what: string): void {
  for (const key of Object.keys(body)) assert.ok(allowed.includes(key), `${what}: unexpected field ${key}`);
  assert.equal(typeof body.name, 'string', `${what}: name`);
  assert.ok((body.name as string).length > 0, `${what}: empty name`);
  if ('tag' in body) assert.equal(typeof body.tag, 'string', `${what}: tag`);
}

function assertStoredPlant(body: unknown, what: string): { id: bigint; plant: ModelPlant } {
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `${what}: not an object`);
  const record = body as Record<string, unknown>;
  assertPlantFields(record, ['id', 'name', 'tag'], what);
  assert.equal(typeof record.id, 'bigint', `${what}: id is not an integer`);
  const id = record.id as bigint;
  assert.ok(id >= INT64_MIN && id <= INT64_MAX, `${what}: id out of int64`);
  return { id, plant: record.tag === undefined ? { name: record.name as string } : { name: record.name as string, tag: record.tag as string } };
}

function describeCase(r: FuzzRequest): string {
  const body = r.body === undefined ? '(none)' : Buffer.isBuffer(r.body) ? `bytes ${r.body.toString('hex').slice(0, 200)}` : r.body.slice(0, 200);
  return `${r.method} ${r.path}${r.query.slice(0, 200)} content-type=${String(r.contentType)} body=${body}`;
}

test(`fuzz: ${RUNS} hostile requests over every operation break no invariant`, { ...FUZZING, timeout: 30 * 60_000 }, async (context) => {
  const t = await testApp(after);
  const tokens = { full: TOKEN, read: await t.tokenWith('plants:read'), write: await t.tokenWith('plants:write') };
  const model = new Map<bigint, ModelPlant>();
  const statuses = new Map<number, number>();
  let cases = 0;

  async function send(r: FuzzRequest): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = {};
    if (r.contentType !== undefined) headers['content-type'] = r.contentType;
    if (r.ifNoneMatch !== undefined) headers['if-none-match'] = r.ifNoneMatch;
    const auth: FuzzAuth = r.auth;
    if (typeof auth === 'object') headers.authorization = auth.header;
    else if (auth !== 'none') headers.authorization = `Bearer ${tokens[auth]}`;
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS);
    });
    try {
      return await Promise.race([t.app.inject({ method: r.method, url: r.path + r.query, headers, payload: r.body }), hang]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function compareStoreWithModel(): Promise<void> {
    const stored = await listPlants(t.store.plants, { limit: 1_000_000 });
    const actual = stored.map((p) => [BigInt(p.id), p.tag === undefined ? { name: p.name } : { name: p.name, tag: p.tag }] as const);
    const expected = [...model.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    assert.deepEqual(actual, expected, 'the store holds exactly what 2xx answers acknowledged');
  }

  /** What a 2xx answer acknowledged, applied to the model; and its shape checked. */
  function acknowledge(r: FuzzRequest, response: LightMyRequestResponse, pathId: () => bigint): void {
    // The path as the request line reaches the router: dot segments resolved (`/plants/..` is `/`, the index).
    const path = new URL(r.path, 'http://localhost').pathname;
    const route = path === '/plants' ? 'collection' : path.startsWith('/plants/') ? 'item' : 'other';
    const body = r.method === 'HEAD' || response.statusCode === 204 ? undefined : parseExact(response.payload);
    if (route === 'collection' && r.method === 'POST') {
      assert.equal(response.statusCode, 200);
      assertPlantFields(body as Record<string, unknown>, ['name', 'tag'], 'POST /plants answer');
      const sent = parseExact(Buffer.isBuffer(r.body) ? r.body.toString('utf8') : r.body!) as Record<string, unknown>;
      const plant = body as ModelPlant;
      assert.equal(plant.name, sent.name);
      assert.equal(plant.tag, sent.tag);
      model.set(asId(sent.id), plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag });
    } else if (route === 'collection' && (r.method === 'GET' || r.method === 'HEAD')) {
      if (r.method === 'HEAD') return;
      assert.ok(Array.isArray(body), 'a list answer is an array');
      assert.ok(body.length <= 1000);
      let previous: bigint | undefined;
      for (const item of body) {
        const { id, plant } = assertStoredPlant(item, 'list item');
        assert.ok(previous === undefined || id > previous, 'list in ascending id order');
        previous = id;
        assert.deepEqual(plant, model.get(id), `list item ${id} is what was acknowledged`);
      }
    } else if (route === 'item' && r.method === 'DELETE') {
      assert.equal(response.statusCode, 204);
      assert.equal(response.payload, '');
      assert.ok(model.delete(pathId()), 'deleted a plant the model has');
    } else if (route === 'item' && (r.method === 'GET' || r.method === 'HEAD')) {
      assert.equal(response.statusCode, 200);
      if (r.method === 'HEAD') return;
      const { id, plant } = assertStoredPlant(body, 'GET answer');
      assert.equal(id, pathId());
      assert.deepEqual(plant, model.get(id), 'read what was acknowledged');
    } else if (route === 'item' && (r.method === 'PUT' || r.method === 'PATCH')) {
      assert.ok(response.statusCode === 200 || (r.method === 'PUT' && response.statusCode === 201), `status ${response.statusCode}`);
      const { id, plant } = assertStoredPlant(body, `${r.method} answer`);
      assert.equal(id, pathId());
      if (r.method === 'PATCH') assert.ok(model.has(id), 'PATCH changed a plant the model has');
      if (response.statusCode === 201) assert.ok(!model.has(id), 'PUT 201 created a plant the model lacked');
      model.set(id, plant);
    }
  }

  await fc.assert(
    fc.asyncProperty(requestArb, async (r) => {
      cases++;
      const response = await send(r);
      const status = response.statusCode;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      assert.ok(status < 500, `a ${status}: ${response.payload}`);
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      if (status >= 400) {
        if (r.method !== 'HEAD') {
          assert.match(String(response.headers['content-type']), /^application\/json\b/);
          const error = JSON.parse(response.payload) as Record<string, unknown>;
          assertErrorShape(error, status);
          assert.equal(error.error, status);
          assert.equal(typeof error.message, 'string');
        }
      } else if (status >= 200 && status < 300) {
        const segment = r.path.slice('/plants/'.length);
        acknowledge(r, response, () => asId(BigInt(decodeURIComponent(segment))));
      }
      if (cases % 250 === 0) await compareStoreWithModel();
    }),
    {
      numRuns: RUNS,
      seed: SEED,
      endOnFailure: true,
      reporter: (details) => {
        if (details.failed) {
          const example = details.counterexample?.[0];
          throw new Error(
            `fuzz failed (seed ${details.seed}, path ${details.counterexamplePath}): ${example ? describeCase(example) : ''}\n${String(details.errorInstance)}`,
          );
        }
      },
    },
  );
  await compareStoreWithModel();
  const summary = [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ');
  context.diagnostic(`fuzz: ${cases} cases, ${model.size} plants in the model; statuses ${summary}`);
  // The run must have reached the store, not only bounced off validation.
  assert.ok((statuses.get(200) ?? 0) > RUNS / 50, `too few 200s: ${summary}`);
  assert.ok((statuses.get(400) ?? 0) > RUNS / 50, `too few 400s: ${summary}`);
});
