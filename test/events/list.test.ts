import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { newId } from '../../src/model/ids.js';
import { TOKEN_IN_URL_REFUSED } from '../../src/http/auth.js';
import { assertError, testApp, TOKEN, type TestApp } from '../helpers.js';
import { nextLink } from '../toolkit.js';

/** GET /events as JSON pages: the change feed's shape, order, paging, filters, errors and scopes. */

interface Event {
  id: string;
  type: string;
  timestamp: string;
  data: { id: string; name?: string; tag?: string };
}

/** The events of a page, ids of plants as text (exact). */
function eventsOf(payload: string): Event[] {
  return JSON.parse(payload.replace(/"data":\{"id":(-?\d+)/g, '"data":{"id":"$1"')) as Event[];
}

/** Follows the Link headers from `url` to the end: every event, and every page's size. */
async function walk(t: TestApp, url: string, token?: string | null): Promise<{ events: Event[]; sizes: number[]; links: string[] }> {
  const events: Event[] = [];
  const sizes: number[] = [];
  const links: string[] = [];
  for (let next: string | undefined = url; next !== undefined;) {
    const res = await t.call('GET', next, { token });
    assert.equal(res.statusCode, 200, res.payload);
    const page = eventsOf(res.payload);
    events.push(...page);
    sizes.push(page.length);
    next = nextLink(res.headers.link);
    if (next !== undefined) links.push(next);
    assert.ok(sizes.length < 1000, 'paging does not end');
  }
  return { events, sizes, links };
}

async function write(t: TestApp, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: string): Promise<void> {
  const res = await t.call(method, url, { body });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.payload}`);
}

describe('GET /events (pages)', () => {
  it('answers every change, oldest first, as {id, type, timestamp, data}: the webhook body with its id, plant ids exact', async () => {
    const t = await testApp(after);
    assert.equal((await t.call('GET', '/events')).payload, '[]');
    const max = '9223372036854775807';
    const before = Date.now();
    await write(t, 'POST', '/plants', `{"id":${max},"name":"Max","tag":"big"}`);
    await write(t, 'PUT', `/plants/${max}`, '{"name":"Max \\"II\\" \u2028"}');
    await write(t, 'PATCH', `/plants/${max}`, '{"tag":"patched"}');
    assert.equal((await t.call('DELETE', '/plants/404')).statusCode, 404, 'a write that changes nothing records nothing');
    await write(t, 'DELETE', `/plants/${max}`);
    await write(t, 'PUT', '/plants/-9223372036854775808', '{"name":"Min"}');
    const res = await t.call('GET', '/events');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json; charset=utf-8$/);
    assert.equal(res.headers.link, undefined);
    const events = eventsOf(res.payload);
    assert.deepEqual(
      events.map((e) => [e.type, e.data]),
      [
        ['plant.created', { id: max, name: 'Max', tag: 'big' }],
        ['plant.updated', { id: max, name: 'Max "II" \u2028' }],
        ['plant.updated', { id: max, name: 'Max "II" \u2028', tag: 'patched' }],
        ['plant.deleted', { id: max }],
        ['plant.created', { id: '-9223372036854775808', name: 'Min' }],
      ],
    );
    for (const event of events) {
      assert.deepEqual(Object.keys(event), ['id', 'type', 'timestamp', 'data']);
      assert.match(event.id, /^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.ok(Date.parse(event.timestamp) >= before - 1000 && Date.parse(event.timestamp) <= Date.now() + 1000);
      assert.match(event.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.match(res.payload, new RegExp(`"data":\\{"id":${max},`), 'a plain JSON integer, every digit');
  });

  it('carries the webhook-id its deliveries carry, so a consumer of both can de-duplicate', async () => {
    const t = await testApp(after, { config: { webhookAllowPrivateNetworks: true } });
    const hook = await t.call('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook' } });
    assert.equal(hook.statusCode, 201, hook.payload);
    const endpoint = hook.json<{ id: string }>().id;
    await write(t, 'POST', '/plants', '{"id":1,"name":"a"}');
    await write(t, 'PATCH', '/plants/1', '{"name":"b"}');
    await write(t, 'DELETE', '/plants/1');
    const feed = eventsOf((await t.call('GET', '/events')).payload).map((e) => [e.id, e.type]);
    const deliveries = (await t.call('GET', `/webhooks/${endpoint}/deliveries`)).json<Array<{ id: string; type: string }>>();
    assert.deepEqual(deliveries.map((d) => [d.id, d.type]).reverse(), feed);
  });

  it('pages by limit (default 100, at most 1000) with Link: rel="next" keeping the other parameters, each event once', async () => {
    const t = await testApp(after);
    const importing = await t.call('POST', '/plants/import', {
      body: Array.from({ length: 1150 }, (_, i) => `{"id":${i},"name":"p${i}"}`).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(importing.statusCode, 200, importing.payload);
    for (let id = 0; id < 50; id++) await write(t, 'DELETE', `/plants/${id}`);
    const all = await walk(t, '/events');
    assert.deepEqual(all.sizes, Array(12).fill(100), 'default 100');
    assert.equal(all.events.length, 1200);
    assert.equal(new Set(all.events.map((e) => e.id)).size, 1200, 'each event once');
    assert.deepEqual(
      all.events.slice(0, 1150).map((e) => e.data.id),
      Array.from({ length: 1150 }, (_, i) => String(i)),
      'an import in id order',
    );
    assert.deepEqual(
      all.events.slice(1150).map((e) => [e.type, e.data.id]),
      Array.from({ length: 50 }, (_, i) => ['plant.deleted', String(i)]),
    );
    assert.deepEqual((await walk(t, '/events?limit=1000')).sizes, [1000, 200]);
    const ofOne = await walk(t, '/events?limit=1&type=plant.deleted');
    assert.equal(ofOne.events.length, 50);
    assert.deepEqual(ofOne.sizes, Array(50).fill(1));
    for (const link of ofOne.links) assert.match(link, /^\/events\?limit=1&type=plant\.deleted&cursor=[A-Za-z0-9_-]+$/);
    // after: everything after that event, whatever the page.
    const cut = all.events[1149]!;
    assert.deepEqual(
      eventsOf((await t.call('GET', `/events?after=${cut.id}&limit=1000`)).payload).map((e) => e.id),
      all.events.slice(1150).map((e) => e.id),
    );
    const last = all.events.at(-1)!;
    const end = await t.call('GET', `/events?after=${last.id}`);
    assert.equal(end.payload, '[]');
    assert.equal(end.headers.link, undefined);
  });

  it('filters by type, one or several (repeated)', async () => {
    const t = await testApp(after);
    await write(t, 'POST', '/plants', '{"id":1,"name":"a"}');
    await write(t, 'POST', '/plants', '{"id":1,"name":"b"}');
    await write(t, 'DELETE', '/plants/1');
    const types = async (query: string) => eventsOf((await t.call('GET', `/events?${query}`)).payload).map((e) => e.type);
    assert.deepEqual(await types('type=plant.created'), ['plant.created']);
    assert.deepEqual(await types('type=plant.deleted&type=plant.created'), ['plant.created', 'plant.deleted']);
    assert.deepEqual(await types('type=plant.updated&type=plant.deleted&type=plant.created'), ['plant.created', 'plant.updated', 'plant.deleted']);
    const [first] = eventsOf((await t.call('GET', '/events')).payload);
    assert.deepEqual(await types(`type=plant.deleted&after=${first!.id}`), ['plant.deleted']);
  });

  it('refuses bad parameters with 400 naming them', async () => {
    const t = await testApp(after);
    for (const query of [
      'after=',
      'after=msg_nope',
      'after=msg_01KAT3Z4K8Q2W5N7X9Y0A1B2CU',
      'after=ep_01KAT3Z4K8Q2W5N7X9Y0A1B2C3',
      'after=a&after=b',
    ]) {
      assertError(await t.call('GET', `/events?${query}`), 400, 'querystring.after');
    }
    for (const query of ['limit=0', 'limit=1001', 'limit=x', 'limit=1.5', 'limit=-1', 'limit=+5', 'limit=', 'limit=1&limit=2']) {
      assertError(await t.call('GET', `/events?${query}`), 400, 'querystring.limit');
    }
    for (const query of ['type=plant.eaten', 'type=', 'type=plant.created&type=plant.created', 'type=PLANT.CREATED']) {
      assertError(await t.call('GET', `/events?${query}`), 400, 'querystring.type');
    }
    // Described in words, not as the pattern it is checked by.
    for (const header of ['nope', 'msg_1', 'msg_01KAT3Z4K8Q2W5N7X9Y0A1B2CU']) {
      const message = assertError(await t.call('GET', '/events', { headers: { 'last-event-id': header } }), 400);
      assert.equal(
        message,
        'headers.last-event-id must be an event id, msg_ and 26 characters (the id: of an event the stream sent), or empty',
        header,
      );
    }
  });

  it('answers 410 for an event id it does not hold: never was, or past the retention; the newest is always kept', async () => {
    const t = await testApp(after);
    assertError(await t.call('GET', `/events?after=${newId('msg')}`), 410, 'resynchronise from GET /plants');
    for (let id = 1; id <= 3; id++) await write(t, 'POST', '/plants', `{"id":${id},"name":"p${id}"}`);
    const events = eventsOf((await t.call('GET', '/events')).payload);
    assert.equal(await t.store.events.deleteExpired(Date.now() + 60_000), 2);
    const message = assertError(await t.call('GET', `/events?after=${events[0]!.id}`), 410, events[0]!.id);
    assert.match(message, /EVENTS_RETENTION_DAYS/);
    assertError(await t.call('GET', `/events?after=${events[1]!.id}`), 410);
    assert.equal((await t.call('GET', `/events?after=${events[2]!.id}`)).payload, '[]', 'a consumer that read everything can resume');
    assert.deepEqual(
      eventsOf((await t.call('GET', '/events')).payload).map((e) => e.id),
      [events[2]!.id],
    );
  });

  it('needs events:read: 401 without a valid token, 403 without the scope; the token may come as access_token instead', async () => {
    const t = await testApp(after);
    await write(t, 'POST', '/plants', '{"id":1,"name":"a"}');
    const missing = assertError(await t.call('GET', '/events', { token: null }), 401);
    assert.match(missing, /missing bearer token/);
    assertError(await t.call('GET', '/events', { token: 'ps_wrong' }), 401);
    const plantsOnly = await t.tokenWith('plants:read', 'plants:write', 'webhooks:manage');
    const refused = await t.call('GET', '/events', { token: plantsOnly });
    assertError(refused, 403, 'events:read');
    assert.match(String(refused.headers['www-authenticate']), /error="insufficient_scope", scope="events:read"/);
    const reader = await t.tokenWith('events:read');
    assert.equal((await t.call('GET', '/events', { token: reader })).statusCode, 200);
    assert.equal((await t.call('GET', '/plants', { token: reader })).statusCode, 403, 'events:read reads no plants');

    // RFC 6750 §2.3: the token in the query, for an EventSource; never with the header too.
    assert.equal((await t.call('GET', `/events?access_token=${reader}`, { token: null })).statusCode, 200);
    assertError(await t.call('GET', `/events?access_token=${plantsOnly}`, { token: null }), 403, 'events:read');
    assertError(await t.call('GET', '/events?access_token=ps_wrong', { token: null }), 401);
    assertError(await t.call('GET', `/events?access_token=${reader}&access_token=${reader}`, { token: null }), 401, 'once');
    assertError(await t.call('GET', `/events?access_token=${reader}`), 400, 'not both');
    assertError(await t.call('GET', `/plants?access_token=${reader}`, { token: null }), 401, 'missing bearer token');
    // Only a token that can do nothing but read the feed may travel in a URL (histories, proxy logs, Referer).
    const readerAndMore = await t.tokenWith('events:read', 'plants:read');
    for (const token of [TOKEN, readerAndMore]) {
      const refusedInUrl = await t.call('GET', `/events?access_token=${token}`, { token: null });
      assert.equal(assertError(refusedInUrl, 403), TOKEN_IN_URL_REFUSED);
      assert.equal((await t.call('GET', '/events', { token })).statusCode, 200, 'the same token in the header is taken');
    }
    // A Link never repeats the token.
    await write(t, 'POST', '/plants', '{"id":2,"name":"b"}');
    const paged = await t.call('GET', `/events?limit=1&access_token=${reader}`, { token: null });
    assert.equal(nextLink(paged.headers.link)?.includes('access_token'), false);
  });

  it('answers JSON unless text/event-stream is preferred', async () => {
    const t = await testApp(after);
    for (const accept of ['*/*', 'application/json', 'text/*, application/json', 'text/event-stream;q=0.5, application/json', 'text/html']) {
      const res = await t.call('GET', '/events', { headers: { accept } });
      assert.equal(res.statusCode, 200, accept);
      assert.match(String(res.headers['content-type']), /^application\/json/, accept);
    }
  });

  it('is in the OpenAPI document: both media types, every parameter, the Event schema, the scope', async () => {
    const t = await testApp(after);
    /* eslint-disable @typescript-eslint/no-explicit-any -- the document is walked as plain JSON */
    const doc: any = (await t.call('GET', '/openapi.json', { token: null })).json();
    const op = doc.paths['/events'].get;
    assert.equal(op.operationId, 'listEvents');
    assert.deepEqual(op.security, [{ bearerAuth: ['events:read'] }]);
    assert.deepEqual(op.parameters.map((p: any) => `${p.in}:${p.name}`).sort(), [
      'header:if-match',
      'header:if-none-match',
      'header:last-event-id',
      'header:prefer',
      'query:access_token',
      'query:after',
      'query:cursor',
      'query:limit',
      'query:type',
    ]);
    assert.deepEqual(Object.keys(op.responses['200'].content).sort(), ['application/json', 'text/event-stream']);
    assert.equal(op.responses['200'].content['application/json'].schema.items.$ref, '#/components/schemas/Event');
    assert.ok(op.responses['410'] && op.responses['503'].headers['Retry-After']);
    assert.equal(doc.components.schemas.Event.anyOf.length, 3);
    assert.ok(doc.tags.some((tag: any) => tag.name === 'events'));
    /* eslint-enable @typescript-eslint/no-explicit-any */
  });
});
