import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp, type TestApp } from '../helpers.js';

/**
 * The webhook POSTs under an Idempotency-Key, on either store: a retried registration gets the same
 * endpoint and secret (one endpoint registered), a retried rotation the same new secret (one rotation),
 * a retried replay the same count (the backlog queued once), and a 404 the write found is kept too.
 */

const URL = 'https://93.184.215.14/plants-hook';

function keyed(t: TestApp, path: string, body: unknown, key: string) {
  return t.call('POST', path, { body, headers: { 'idempotency-key': key } });
}

describe('Idempotency-Key on the webhook POSTs', () => {
  it('POST /webhooks: a retry gets the same endpoint, secret and Location, and registers nothing more', async () => {
    const t = await testApp(after);
    const first = await keyed(t, '/webhooks', { url: URL, description: 'sheet' }, 'reg');
    assert.equal(first.statusCode, 201, first.payload);
    const plain = await t.call('POST', '/webhooks', { body: { url: URL, description: 'sheet' } });
    const shape = (text: string) => text.replace(/"(id|secret|createdAt)":"[^"]*"/g, '"$1":…');
    assert.equal(shape(first.payload), shape(plain.payload), 'the answer a registration without a key gets');
    assert.equal(first.headers['content-type'], plain.headers['content-type']);
    const id = first.json<{ id: string }>().id;
    assert.equal(first.headers.location, `/webhooks/${id}`);
    const retry = await keyed(t, '/webhooks', { url: URL, description: 'sheet' }, 'reg');
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.payload, first.payload, 'the same id and secret');
    assert.equal(retry.headers.location, first.headers.location);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    const listed = (await t.call('GET', '/webhooks')).json<Array<{ id: string }>>().map((e) => e.id);
    assert.deepEqual(listed.sort(), [id, plain.json<{ id: string }>().id].sort());
  });

  it('POST /webhooks: a URL refused (400) keeps nothing; a retry is checked again, and runs once corrected', async () => {
    const t = await testApp(after);
    assertError(await keyed(t, '/webhooks', { url: 'http://127.0.0.1:9/private' }, 'url'), 400, 'body.url');
    assertError(await keyed(t, '/webhooks', { url: 'http://127.0.0.1:9/private' }, 'url'), 400, 'body.url');
    const fixed = await keyed(t, '/webhooks', { url: URL }, 'url');
    assert.equal(fixed.statusCode, 201);
    assert.equal(fixed.headers['idempotent-replayed'], undefined);
  });

  it('POST /webhooks/{id}/rotate-secret: a retry gets the same new secret, and the secret rotated once', async () => {
    const t = await testApp(after);
    const created = (await t.call('POST', '/webhooks', { body: { url: URL } })).json<{ id: string; secret: string }>();
    const path = `/webhooks/${created.id}/rotate-secret`;
    const first = await keyed(t, path, undefined, 'rot');
    assert.equal(first.statusCode, 200, first.payload);
    const retry = await keyed(t, path, undefined, 'rot');
    assert.equal(retry.payload, first.payload);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    const [due] = await signingSecrets(t, created.id);
    assert.deepEqual(due, [first.json<{ secret: string }>().secret, created.secret], 'the new secret, then the one before it: one rotation');
  });

  it('keeps the 404 a rotation or a replay found; an id of another form (U+0000 among others) is a 400 that keeps nothing', async () => {
    const t = await testApp(after);
    const missing = await keyed(t, '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/rotate-secret', undefined, 'gone');
    assertError(missing, 404, 'no webhook endpoint with id ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C');
    const retry = await keyed(t, '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/rotate-secret', undefined, 'gone');
    assert.deepEqual([retry.payload, retry.headers['idempotent-replayed']], [missing.payload, 'true']);
    for (const key of [undefined, 'nul']) {
      const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
      assertError(await t.call('POST', '/webhooks/ep_%00x/rotate-secret', { headers }), 400, 'params.id must be a webhook endpoint id', 'invalid_id');
    }
    assert.equal(await t.store.idempotency.count(), 1);
    const replay = await keyed(t, '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/replay', { since: '2026-01-01T00:00:00Z' }, 'gone again');
    assertError(replay, 404, 'ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C');
    const again = await keyed(t, '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/replay', { since: '2026-01-01T00:00:00Z' }, 'gone again');
    assert.equal(again.headers['idempotent-replayed'], 'true');
  });

  it('POST /webhooks/{id}/replay: a retry gets the same count, queueing nothing again; until before since (400) keeps nothing', async () => {
    const t = await testApp(after);
    const id = (await t.call('POST', '/webhooks', { body: { url: URL } })).json<{ id: string }>().id;
    const path = `/webhooks/${id}/replay`;
    assertError(await keyed(t, path, { since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'again'), 400, 'until');
    const first = await keyed(t, path, { since: '2026-01-01T00:00:00Z' }, 'again');
    assert.equal(first.statusCode, 202, first.payload);
    assert.equal(first.payload, (await t.call('POST', path, { body: { since: '2026-01-01T00:00:00Z' } })).payload);
    const retry = await keyed(t, path, { since: '2026-01-01T00:00:00Z' }, 'again');
    assert.deepEqual([retry.statusCode, retry.payload, retry.headers['idempotent-replayed']], [202, first.payload, 'true']);
  });
});

/** The secrets a due message of the endpoint would be signed with: the current one, then the one before it. */
async function signingSecrets(t: TestApp, endpointId: string): Promise<string[][]> {
  await t.call('POST', '/plants', { body: { id: 1, name: 'announced' } });
  const due = await t.store.webhooks.claimDue(10, 60_000);
  return due.filter((m) => m.endpointId === endpointId).map((m) => m.secrets);
}
