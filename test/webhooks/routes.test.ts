import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';
import { nextLink } from '../toolkit.js';

/** An endpoint id of the right form that no endpoint has. */
const NOBODY = 'ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C';

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('webhook endpoints over HTTP', async () => {
  // Public test URLs: their host is an IP literal of the documentation-free public space, so no DNS is needed.
  const t = await testApp(after);
  const url = 'https://93.184.215.14/plants-hook';

  it('POST /webhooks registers an endpoint: 201, Location, all events by default, the secret once', async () => {
    const res = await t.call('POST', '/webhooks', { body: { url } });
    assert.equal(res.statusCode, 201, res.payload);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['createdAt', 'enabled', 'events', 'id', 'secret', 'url']);
    assert.equal(res.headers.location, `/webhooks/${body.id}`);
    assert.equal(body.url, url);
    assert.deepEqual(body.events, ['plant.created', 'plant.updated', 'plant.deleted']);
    assert.equal(body.enabled, true);
    assert.match(body.createdAt, ISO);
    const key = Buffer.from(SECRET.exec(body.secret)![1]!, 'base64');
    assert.ok(key.length >= 24 && key.length <= 64, `secret of ${key.length} bytes`);

    const read = await t.call('GET', `/webhooks/${body.id}`);
    assert.equal(read.statusCode, 200);
    const { secret: _secret, ...withoutSecret } = body;
    assert.deepEqual(read.json(), withoutSecret, 'the same endpoint, without its secret');
    assert.ok(!read.payload.includes(body.secret));
  });

  it('keeps the events and description given', async () => {
    const res = await t.call('POST', '/webhooks', { body: { url, events: ['plant.deleted'], description: 'inventory sheet' } });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json().events, ['plant.deleted']);
    assert.equal(res.json().description, 'inventory sheet');
  });

  describe('400 for bad input, naming the field', () => {
    const cases: Array<[string, unknown, string]> = [
      ['no url', {}, 'body.url'],
      ['a url that is not a string', { url: 5 }, 'body.url'],
      ['a relative url', { url: '/hooks' }, 'body.url'],
      ['not a url', { url: 'not a url' }, 'body.url'],
      ['an ftp url', { url: 'ftp://93.184.215.14/x' }, 'body.url'],
      ['a url with credentials', { url: 'https://user:pw@93.184.215.14/x' }, 'body.url'],
      ['a url over 2048 characters', { url: `https://93.184.215.14/${'a'.repeat(2048)}` }, 'body.url'],
      ['an unknown event', { url, events: ['plant.eaten'] }, 'body.events'],
      ['an empty events list', { url, events: [] }, 'body.events'],
      ['a repeated event', { url, events: ['plant.created', 'plant.created'] }, 'body.events'],
      ['events that are not a list', { url, events: 'plant.created' }, 'body.events'],
      ['a description over 1000 characters', { url, description: 'd'.repeat(1001) }, 'body.description'],
    ];
    for (const [what, body, field] of cases) {
      it(what, async () => {
        assertError(await t.call('POST', '/webhooks', { body }), 400, field);
      });
    }
  });

  describe('refuses URLs that reach the service own network (server-side request forgery)', () => {
    const refused = [
      'http://127.0.0.1/x',
      'http://127.1.2.3:8080/x',
      'http://localhost/x',
      'http://10.0.0.5/x',
      'http://172.16.0.1/x',
      'http://172.31.255.255/x',
      'http://192.168.1.1/x',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/x',
      'http://0.0.0.0/x',
      'http://224.0.0.1/x',
      'http://[::1]/x',
      'http://[::]/x',
      'http://[fc00::1]/x',
      'http://[fd12:3456::1]/x',
      'http://[fe80::1]/x',
      'http://[ff02::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://[::ffff:10.0.0.1]/x',
      'http://[64:ff9b::a00:1]/x',
      'http://[::ffff:0:7f00:1]/x',
      'http://[::ffff:0:10.0.0.1]/x',
      'http://[64:ff9b:1::a00:1]/x',
      'http://[2001::1]/x',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x',
      'http://[2002:a9fe:a9fe::1]/x',
      'http://2130706433/x',
      'http://0x7f.1/x',
      'http://017700000001/x',
    ];
    for (const target of refused) {
      it(target, async () => {
        const message = assertError(await t.call('POST', '/webhooks', { body: { url: target } }), 400, 'body.url');
        assert.match(message, /is not a public address/);
      });
    }
  });

  it('lists endpoints in id order a page at a time, with Link, and never a secret', async () => {
    const fresh = await testApp(after);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await fresh.call('POST', '/webhooks', { body: { url, description: `n${i}` } })).json().id);
    const first = await fresh.call('GET', '/webhooks?limit=2');
    assert.equal(first.statusCode, 200);
    assert.deepEqual(
      first.json().map((e: { id: string }) => e.id),
      made.slice(0, 2),
    );
    const link = nextLink(first.headers.link)!;
    assert.match(link, /^\/webhooks\?limit=2&cursor=[A-Za-z0-9_-]+$/);
    assert.deepEqual(
      (await fresh.call('GET', link)).json(),
      (await fresh.call('GET', `/webhooks?limit=2&after=${made[1]}`)).json(),
      'after: the alias',
    );
    const rest = await fresh.call('GET', link.replace('limit=2', 'limit=10'));
    assert.deepEqual(
      rest.json().map((e: { id: string }) => e.id),
      made.slice(2),
    );
    assert.equal(rest.headers.link, undefined);
    assert.ok(!first.payload.includes('whsec_') && !rest.payload.includes('whsec_'));
    assertError(await fresh.call('GET', '/webhooks?limit=0'), 400, 'querystring.limit');
    // The alias is an endpoint id, as the other lists' are their ids: anything else is 400, never a query of the store.
    for (const after of ['abc', '%00', 'ep_nope', `${made[1]!}x`]) {
      assertError(await fresh.call('GET', `/webhooks?after=${after}`), 400, 'querystring.after must be a webhook endpoint id', 'validation_failed');
    }
  });

  it('PATCH changes url, events, description (null removes it) and enabled; a private URL is refused', async () => {
    const { id } = (await t.call('POST', '/webhooks', { body: { url, description: 'old' } })).json();
    const res = await t.call('PATCH', `/webhooks/${id}`, {
      body: { url: 'https://93.184.215.15/new', events: ['plant.created'], description: null, enabled: false },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    assert.equal(res.statusCode, 200, res.payload);
    const body = res.json();
    assert.equal(body.url, 'https://93.184.215.15/new');
    assert.deepEqual(body.events, ['plant.created']);
    assert.equal(body.description, undefined);
    assert.equal(body.enabled, false);
    assert.equal((await t.call('PATCH', `/webhooks/${id}`, { body: {} })).json().enabled, false, '{} changes nothing');
    assertError(await t.call('PATCH', `/webhooks/${id}`, { body: { url: 'http://10.1.1.1/x' } }), 400, 'body.url');
    assertError(await t.call('PATCH', `/webhooks/${id}`, { body: { events: [] } }), 400, 'body.events');
    assertError(await t.call('PATCH', `/webhooks/${id}`, { body: { enabled: 'yes' } }), 400, 'body.enabled');
    assertError(await t.call('PATCH', `/webhooks/${NOBODY}`, { body: { enabled: true } }), 404, undefined, 'not_found');
    assertError(await t.call('PATCH', '/webhooks/ep_nope', { body: { enabled: true } }), 400, 'params.id', 'invalid_id');
  });

  it('DELETE answers 204, then 404', async () => {
    const { id } = (await t.call('POST', '/webhooks', { body: { url } })).json();
    const res = await t.call('DELETE', `/webhooks/${id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.payload, '');
    assertError(await t.call('DELETE', `/webhooks/${id}`), 404);
    assertError(await t.call('GET', `/webhooks/${id}`), 404);
  });

  it('rotate-secret answers a new secret, only there', async () => {
    const { id, secret } = (await t.call('POST', '/webhooks', { body: { url } })).json();
    const res = await t.call('POST', `/webhooks/${id}/rotate-secret`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(Object.keys(res.json()), ['secret']);
    assert.match(res.json().secret, SECRET);
    assert.notEqual(res.json().secret, secret);
    assertError(await t.call('POST', `/webhooks/${NOBODY}/rotate-secret`), 404, undefined, 'not_found');
    assertError(await t.call('POST', '/webhooks/ep_nope/rotate-secret'), 400, 'params.id', 'invalid_id');
  });

  it('the deliveries log: empty at first; bad status, unknown cursor and unknown endpoint refused', async () => {
    const { id } = (await t.call('POST', '/webhooks', { body: { url } })).json();
    const res = await t.call('GET', `/webhooks/${id}/deliveries`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), []);
    assertError(await t.call('GET', `/webhooks/${id}/deliveries?status=lost`), 400, 'querystring.status');
    assertError(await t.call('GET', `/webhooks/${id}/deliveries?after=not-a-webhook-id`), 400, 'querystring.after');
    assert.deepEqual((await t.call('GET', `/webhooks/${id}/deliveries?after=msg_01HZZZZZZZZZZZZZZZZZZZZZZZ`)).json(), []);
    assertError(await t.call('GET', `/webhooks/${id}/deliveries?limit=1001`), 400, 'querystring.limit');
    assertError(await t.call('GET', `/webhooks/${NOBODY}/deliveries`), 404, undefined, 'not_found');
    assertError(await t.call('GET', '/webhooks/ep_nope/deliveries'), 400, 'params.id', 'invalid_id');
  });

  it("each log entry carries the event's type, time and plant id (exact beyond 2^53)", async () => {
    const { id } = (await t.call('POST', '/webhooks', { body: { url } })).json();
    const before = Date.now();
    assert.equal((await t.call('PUT', '/plants/9223372036854775807', { body: { name: 'Max' } })).statusCode, 201);
    assert.equal((await t.call('DELETE', '/plants/9223372036854775807')).statusCode, 204);
    const res = await t.call('GET', `/webhooks/${id}/deliveries`);
    assert.equal(res.statusCode, 200);
    const log = res.json();
    assert.deepEqual(
      log.map((m: { type: string }) => m.type),
      ['plant.deleted', 'plant.created'],
    );
    for (const entry of log) {
      assert.match(entry.occurredAt, ISO);
      assert.ok(Date.parse(entry.occurredAt) >= before - 1000 && Date.parse(entry.occurredAt) <= Date.now() + 1000);
    }
    // The id as the service wrote it: JSON.parse would round it.
    assert.equal([...res.payload.matchAll(/"plantId":(-?\d+)/g)].map((m) => m[1]).join(), '9223372036854775807,9223372036854775807');
  });

  it('replay: 202 with a count; since must be RFC 3339, until not before it; unknown endpoint 404', async () => {
    const { id } = (await t.call('POST', '/webhooks', { body: { url } })).json();
    const ok = await t.call('POST', `/webhooks/${id}/replay`, { body: { since: '2026-01-01T00:00:00Z' } });
    assert.equal(ok.statusCode, 202, ok.payload);
    assert.deepEqual(ok.json(), { requeued: 0 });
    assertError(await t.call('POST', `/webhooks/${id}/replay`, { body: {} }), 400, 'body.since');
    assertError(await t.call('POST', `/webhooks/${id}/replay`, { body: { since: 'yesterday' } }), 400, 'body.since');
    assertError(await t.call('POST', `/webhooks/${id}/replay`, { body: { since: '2026-01-01' } }), 400, 'body.since');
    assertError(
      await t.call('POST', `/webhooks/${id}/replay`, { body: { since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00+01:00' } }),
      400,
      'body.until',
    );
    assertError(await t.call('POST', `/webhooks/${NOBODY}/replay`, { body: { since: '2026-01-01T00:00:00Z' } }), 404, undefined, 'not_found');
    assertError(await t.call('POST', '/webhooks/ep_nope/replay', { body: { since: '2026-01-01T00:00:00Z' } }), 400, 'params.id', 'invalid_id');
  });

  it('needs the webhooks:manage scope: plant tokens get 403, no token 401', async () => {
    const plantsOnly = await t.tokenWith('plants:read', 'plants:write');
    assertError(await t.call('GET', '/webhooks', { token: plantsOnly }), 403, 'webhooks:manage');
    assertError(await t.call('POST', '/webhooks', { token: plantsOnly, body: { url } }), 403);
    assertError(await t.call('GET', '/webhooks', { token: null }), 401);
    const manager = await t.tokenWith('webhooks:manage');
    assert.equal((await t.call('GET', '/webhooks', { token: manager })).statusCode, 200);
    assertError(await t.call('GET', '/plants', { token: manager }), 403, 'plants:read');
  });
});
