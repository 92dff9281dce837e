import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { VERSION } from '../../src/version.js';
import { openTestStore, testApp, TOKEN } from '../helpers.js';
import { CLIENT, ERROR, SERVER, tracingTo, type ReceivedSpan } from './collector.js';

/**
 * The spans the service makes, as a collector receives them (OTLP/HTTP in JSON here; the process test
 * takes protobuf): each request a SERVER span continuing its caller's trace, the store batch it waited on
 * (its child when it served that request alone, linked both ways when it served several), nothing secret.
 * Runs on SQLite, and again on PostgreSQL from test/store/postgres/http.process.test.ts.
 */

const warnings: string[] = [];
const { collector, tracing } = await tracingTo(after, {}, (message) => warnings.push(message));
after(() => assert.deepEqual(warnings, [], 'the SDK had nothing to complain of'));

/** Every span exported so far (the batch processor's queue flushed first). */
async function exported(): Promise<ReceivedSpan[]> {
  await tracing.flush();
  return collector.spans;
}

/** The span of the request whose answer carried this X-Request-Id. */
function requestSpan(spans: ReceivedSpan[], requestId: unknown): ReceivedSpan {
  const found = spans.filter((s) => s.attributes['plant_store.request.id'] === requestId);
  assert.equal(found.length, 1, `one span for request ${String(requestId)}`);
  return found[0]!;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const caller = () => ({ traceId: hex(16), spanId: hex(8) });
const ids = { next: 1 };
const plantId = () => 7_000_000 + ids.next++;

/** The span names of a store's batches. */
function batchName(store: Store, operation: 'commit' | 'read'): string {
  if (store.kind === 'postgres') return operation === 'commit' ? 'postgresql commit' : 'postgresql lookup';
  return operation === 'commit' ? 'sqlite commit' : 'sqlite reads';
}

describe('request spans', () => {
  it('are SERVER spans named by method and route template, with the HTTP attributes, the request id and the service', async () => {
    const t = await testApp(after, { tracing });
    const id = plantId();
    const created = await t.call('POST', '/plants', { body: { id, name: 'Fern' }, headers: { 'user-agent': 'span-test/1' } });
    assert.equal(created.statusCode, 200);
    const read = await t.call('GET', `/plants/${id}`);
    assert.equal(read.statusCode, 200);
    const spans = await exported();

    const post = requestSpan(spans, created.headers['x-request-id']);
    assert.equal(post.name, 'POST /plants');
    assert.equal(post.kind, SERVER);
    assert.equal(post.parentSpanId, '', 'no caller: a trace of its own');
    assert.deepEqual(post.attributes, {
      'http.request.method': 'POST',
      'http.route': '/plants',
      'http.response.status_code': 200,
      'url.path': '/plants',
      'url.scheme': 'http',
      'server.address': 'localhost',
      'server.port': 80,
      'client.address': '127.0.0.1',
      'network.protocol.version': '1.1',
      'user_agent.original': 'span-test/1',
      'plant_store.request.id': created.headers['x-request-id'],
    });
    assert.equal(post.status.code, 0, 'unset: no error');
    assert.equal(post.resource['service.name'], 'plant-store');
    assert.equal(post.resource['service.version'], VERSION);
    assert.equal(post.resource['process.pid'], process.pid);

    const get = requestSpan(spans, read.headers['x-request-id']);
    assert.equal(get.name, 'GET /plants/:id');
    assert.equal(get.attributes['http.route'], '/plants/:id');
    assert.equal(get.attributes['url.path'], `/plants/${id}`);
    assert.notEqual(get.traceId, post.traceId, 'every request without a caller starts a trace');
  });

  it('name a request no route matched by its method alone; a 4xx is no error, a 5xx is', async () => {
    const failing = await openTestStore(after);
    // A store whose reads are unavailable: the answer is 503.
    const plants = Object.create(failing.plants) as Store['plants'];
    plants.get = () => Promise.reject(new StoreUnavailableError('down for the test'));
    // Its methods by hand: a spread copies an object's own fields only.
    const store: Store = { ...failing, plants, ping: () => failing.ping(), close: () => failing.close() };
    const t = await testApp(after, { tracing, store });
    const missing = await t.call('GET', '/no/such/thing?x=1');
    assert.equal(missing.statusCode, 404);
    const refused = await t.call('GET', '/plants', { token: 'wrong-token-of-sufficient-length-0000' });
    assert.equal(refused.statusCode, 401);
    const down = await t.call('GET', '/plants/1');
    assert.equal(down.statusCode, 503);
    const spans = await exported();

    const unmatched = requestSpan(spans, missing.headers['x-request-id']);
    assert.equal(unmatched.name, 'GET');
    assert.equal(unmatched.attributes['http.route'], undefined);
    assert.equal(unmatched.attributes['url.path'], '/no/such/thing');
    assert.equal(unmatched.attributes['http.response.status_code'], 404);
    assert.equal(unmatched.status.code, 0);
    const unauthorized = requestSpan(spans, refused.headers['x-request-id']);
    assert.equal(unauthorized.name, 'GET /plants');
    assert.equal(unauthorized.status.code, 0, 'a 401 is the client’s error');
    const failed = requestSpan(spans, down.headers['x-request-id']);
    assert.equal(failed.status.code, ERROR);
    assert.equal(failed.attributes['error.type'], '503');
  });

  it("span a URL the router cannot read too (answered outside the hooks), in the caller's trace", async () => {
    const t = await testApp(after, { tracing });
    const from = caller();
    const answer = await t.call('GET', '/plants/%zz', { headers: { traceparent: `00-${from.traceId}-${from.spanId}-01` } });
    assert.equal(answer.statusCode, 400);
    const span = requestSpan(await exported(), answer.headers['x-request-id']);
    assert.equal(span.name, 'GET');
    assert.equal(span.traceId, from.traceId);
    assert.equal(span.attributes['http.response.status_code'], 400);
  });

  it("continue the caller's trace from a W3C traceparent; a malformed one starts a trace; a caller's not-sampled is honoured", async () => {
    const t = await testApp(after, { tracing });
    const sampled = caller();
    const joined = await t.call('GET', '/plants?limit=1', {
      headers: { traceparent: `00-${sampled.traceId}-${sampled.spanId}-01`, tracestate: 'vendor=1' },
    });
    const malformed = await t.call('GET', '/plants?limit=1', { headers: { traceparent: `00-${sampled.traceId}-nothex-01` } });
    const unsampled = caller();
    const skipped = await t.call('POST', '/plants', {
      body: { id: plantId(), name: 'Unsampled' },
      headers: { traceparent: `00-${unsampled.traceId}-${unsampled.spanId}-00` },
    });
    assert.equal(skipped.statusCode, 200);
    const spans = await exported();

    const continued = requestSpan(spans, joined.headers['x-request-id']);
    assert.equal(continued.traceId, sampled.traceId);
    assert.equal(continued.parentSpanId, sampled.spanId);
    const fresh = requestSpan(spans, malformed.headers['x-request-id']);
    assert.notEqual(fresh.traceId, sampled.traceId);
    assert.equal(fresh.parentSpanId, '');
    assert.equal(
      spans.filter((s) => s.traceId === unsampled.traceId).length,
      0,
      'nothing of a trace its caller does not sample: neither the request nor its commit',
    );
  });
});

describe('store batch spans', () => {
  it("make a lone write's commit and a lone read the child of their request", async () => {
    const t = await testApp(after, { tracing });
    const id = plantId();
    const created = await t.call('POST', '/plants', { body: { id, name: 'Moss' } });
    const read = await t.call('GET', `/plants/${id}`);
    assert.equal(read.statusCode, 200);
    const spans = await exported();

    for (const [answer, operation] of [
      [created, 'commit'],
      [read, 'read'],
    ] as const) {
      const request = requestSpan(spans, answer.headers['x-request-id']);
      const children = spans.filter((s) => s.parentSpanId === request.spanId);
      assert.equal(children.length, 1, `${request.name}: one batch span, its child`);
      const [batch] = children;
      assert.equal(batch!.name, batchName(t.store, operation));
      assert.equal(batch!.kind, CLIENT);
      assert.equal(batch!.traceId, request.traceId);
      assert.equal(batch!.attributes['db.system.name'], t.store.kind === 'postgres' ? 'postgresql' : 'sqlite');
      assert.equal(batch!.attributes['plant_store.batch.requests'], 1);
      assert.deepEqual(batch!.links, []);
      assert.deepEqual(request.links, [], 'a child needs no link');
    }
  });

  it('link a batch that served several requests from each of them, and it to each', async () => {
    const t = await testApp(after, { tracing });
    // Enough at once that several wait for the same commit (writes gather while a batch commits).
    const answers = await Promise.all(Array.from({ length: 40 }, () => t.call('POST', '/plants', { body: { id: plantId(), name: 'Together' } })));
    for (const answer of answers) assert.equal(answer.statusCode, 200);
    const spans = await exported();
    const requests = answers.map((answer) => requestSpan(spans, answer.headers['x-request-id']));
    const commits = spans.filter((s) => s.name === batchName(t.store, 'commit'));
    const byId = new Map(commits.map((s) => [s.spanId, s]));

    const shared = commits.filter((s) => s.links.some((link) => requests.some((r) => r.spanId === link.spanId)));
    assert.ok(shared.length >= 1, 'at least one commit served several requests');
    for (const batch of shared) {
      assert.equal(batch.parentSpanId, '', 'a batch of several requests is a trace of its own');
      assert.ok(batch.links.length >= 2);
      assert.equal(batch.attributes['plant_store.batch.requests'], batch.links.length);
      assert.ok(Number(batch.attributes['db.operation.batch.size']) >= batch.links.length);
      for (const link of batch.links) {
        const request = requests.find((r) => r.spanId === link.spanId);
        assert.ok(request, 'each link names one of the requests');
        assert.equal(link.traceId, request.traceId);
        assert.deepEqual(request.links, [{ traceId: batch.traceId, spanId: batch.spanId }], 'and that request links back to the batch');
      }
    }
    // Every request waited on exactly one commit: its child, or the one it links to.
    for (const request of requests) {
      const child = commits.filter((s) => s.parentSpanId === request.spanId);
      const linked = request.links.filter((link) => byId.has(link.spanId));
      assert.equal(child.length + linked.length, 1, `${request.attributes['plant_store.request.id']}: one commit`);
    }
  });
});

describe('what spans never hold', () => {
  it('no token, no body, no query string, no header but User-Agent', async () => {
    const t = await testApp(after, { tracing });
    const secrets = { body: `body-secret-${hex(4)}`, query: `query-secret-${hex(4)}`, header: `header-secret-${hex(4)}` };
    const answers = [
      await t.call('POST', '/plants', { body: { id: plantId(), name: secrets.body, tag: secrets.body }, headers: { 'x-api-key': secrets.header } }),
      await t.call('GET', `/plants?tag=${secrets.query}&limit=5`),
      await t.call('GET', `/plants?token=${secrets.query}`, { token: `${secrets.header}-as-a-bearer-token` }),
      await t.call('PATCH', `/plants/${plantId()}`, { body: { name: secrets.body }, headers: { 'content-type': 'application/merge-patch+json' } }),
    ];
    const spans = await exported();
    const mine = answers.map((answer) => requestSpan(spans, answer.headers['x-request-id']));
    const text = JSON.stringify(spans);
    for (const secret of [TOKEN, secrets.body, secrets.query, secrets.header]) assert.ok(!text.includes(secret), `no span holds ${secret}`);
    for (const span of mine) {
      assert.ok(!String(span.attributes['url.path']).includes('?'), 'the path without its query');
      for (const key of Object.keys(span.attributes)) assert.ok(!key.startsWith('http.request.header.'), `no header recorded (${key})`);
      assert.equal(span.attributes['url.query'], undefined);
    }
  });
});
