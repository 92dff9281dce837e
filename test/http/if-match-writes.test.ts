import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertErrorShape, testApp } from '../helpers.js';
import { operation, type Json } from '../openapi/walk.js';

/**
 * If-Match on the writes of resources without a version of their own (a webhook endpoint, a stored token):
 * their reads give a strong ETag, the hash of the answer, which If-Match (strong comparison, RFC 9110
 * §13.1.1) can name; the writes judge it before doing anything (412, nothing changed), once the resource is
 * found (a missing one is 404, §13.2.1). A weak tag a client kept from before still revalidates a read.
 */

describe('If-Match on webhook endpoint and token writes', async () => {
  const t = await testApp(after, { config: { webhookAllowPrivateNetworks: true } });
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  const newEndpoint = async () => (await t.call('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook' } })).json<{ id: string }>().id;
  const etagOf = async (url: string) => String((await t.call('GET', url)).headers.etag);

  it('an endpoint read has a strong ETag; a weak one kept from before still gets 304', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    assert.equal((await t.call('GET', url, { headers: { 'if-none-match': `W/${etag}` } })).statusCode, 304);
    assert.equal((await t.call('GET', url, { headers: { 'if-match': etag } })).statusCode, 200);
  });

  it('PATCH /webhooks/{id}: done when If-Match names its ETag (or is *), else 412 and nothing changed', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    const changed = await t.call('PATCH', url, { body: { description: 'first' }, headers: { 'if-match': etag } });
    assert.equal(changed.statusCode, 200, changed.payload);
    assert.notEqual(await etagOf(url), etag, 'a change, another tag');

    for (const stale of [etag, `W/${etag}`, '"no-such-tag"']) {
      const refused = await t.call('PATCH', url, { body: { description: 'lost update' }, headers: { 'if-match': stale } });
      assert.equal(refused.statusCode, 412, `If-Match: ${stale}`);
      assertErrorShape(refused.json(), 412, 'precondition_failed');
    }
    assert.equal((await t.call('GET', url)).json<{ description: string }>().description, 'first');

    const current = await etagOf(url);
    assert.equal((await t.call('PATCH', url, { body: { description: 'second' }, headers: { 'if-match': `"other", ${current}` } })).statusCode, 200);
    assert.equal((await t.call('PATCH', url, { body: { description: 'third' }, headers: { 'if-match': '*' } })).statusCode, 200);
    assert.equal((await t.call('PATCH', url, { body: { description: 'fourth' } })).statusCode, 200, 'without If-Match, as before');
    assert.equal((await t.call('PATCH', '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C', { body: {}, headers: { 'if-match': '*' } })).statusCode, 404);
  });

  it('writes sent at once with one If-Match: one is done, the others 412 (judged in the write, not before it)', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((description) => t.call('PATCH', url, { body: { description }, headers: { 'if-match': etag } })),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    assert.deepEqual(statuses, [200, 412, 412, 412]);
    const won = answers.find((answer) => answer.statusCode === 200)!.json<{ description: string }>().description;
    assert.equal((await t.call('GET', url)).json<{ description: string }>().description, won);
    // Two deletes naming the current tag and one a stale one: one deletes; the others find it gone (404) or changed (412).
    const current = await etagOf(url);
    const deletes = await Promise.all([etag, current, current].map((tag) => t.call('DELETE', url, { headers: { 'if-match': tag } })));
    const deleted = deletes.map((answer) => answer.statusCode);
    assert.equal(deleted.filter((status) => status === 204).length, 1, String(deleted));
    assert.ok(
      deleted.every((status) => [204, 404, 412].includes(status)),
      String(deleted),
    );
    assert.equal((await t.call('GET', url)).statusCode, 404);
  });

  it('DELETE /webhooks/{id}: 412 and kept on a stale If-Match, deleted on the current one', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    await t.call('PATCH', url, { body: { description: 'changed' } });
    assert.equal((await t.call('DELETE', url, { headers: { 'if-match': etag } })).statusCode, 412);
    assert.equal((await t.call('GET', url)).statusCode, 200, 'still there');
    assert.equal((await t.call('DELETE', url, { headers: { 'if-match': await etagOf(url) } })).statusCode, 204);
    assert.equal((await t.call('DELETE', url, { headers: { 'if-match': '*' } })).statusCode, 404, 'gone: 404, the precondition aside');
  });

  it('POST /webhooks/{id}/rotate-secret: a rotation changes the ETag; done when If-Match names the current one (or is *), else 412', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    const rotated = await t.call('POST', `${url}/rotate-secret`, { headers: { 'if-match': etag } });
    assert.equal(rotated.statusCode, 200, rotated.payload);
    const read = await t.call('GET', url);
    assert.notEqual(read.headers.etag, etag, 'the endpoint changed: another tag');
    assert.match(read.json<{ previousSecretUntil: string }>().previousSecretUntil, /^\d{4}-\d\d-\d\dT/);
    for (const stale of [etag, `W/${read.headers.etag}`, '"no-such-tag"']) {
      const refused = await t.call('POST', `${url}/rotate-secret`, { headers: { 'if-match': stale } });
      assert.equal(refused.statusCode, 412, `If-Match: ${stale}`);
      assertErrorShape(refused.json(), 412, 'precondition_failed');
    }
    assert.equal(await etagOf(url), read.headers.etag, 'nothing rotated');
    // A PATCH with the tag read before the rotation is refused too.
    assert.equal((await t.call('PATCH', url, { body: { description: 'x' }, headers: { 'if-match': etag } })).statusCode, 412);
    assert.equal(
      (await t.call('POST', `${url}/rotate-secret`, { headers: { 'if-match': `"other", ${String(read.headers.etag)}` } })).statusCode,
      200,
    );
    assert.equal((await t.call('POST', `${url}/rotate-secret`, { headers: { 'if-match': '*' } })).statusCode, 200);
    assert.equal((await t.call('POST', `${url}/rotate-secret`)).statusCode, 200, 'without If-Match, as before');
    const missing = '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/rotate-secret';
    assert.equal((await t.call('POST', missing, { headers: { 'if-match': '*' } })).statusCode, 404);
  });

  it('rotations sent at once with one If-Match: one is done (its secret signs), the others 412', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    const answers = await Promise.all([1, 2, 3, 4].map(() => t.call('POST', `${url}/rotate-secret`, { headers: { 'if-match': etag } })));
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 412, 412, 412]);
    const won = answers.find((answer) => answer.statusCode === 200)!.json<{ secret: string }>().secret;
    await t.store.plants.put({ id: 7_700_001, name: 'signed by the rotation done' });
    const due = (await t.store.webhooks.claimDue(1000, 60_000)).find((message) => url.endsWith(message.endpointId));
    assert.equal(due?.secrets[0], won);
  });

  it('a retry of a rotation (its Idempotency-Key) gets the secret it made, not a 412 for the tag it changed', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const headers = { 'if-match': await etagOf(url), 'idempotency-key': `rotate-${url}` };
    const first = await t.call('POST', `${url}/rotate-secret`, { headers });
    assert.equal(first.statusCode, 200, first.payload);
    const retry = await t.call('POST', `${url}/rotate-secret`, { headers });
    assert.equal(retry.statusCode, 200, retry.payload);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.json<{ secret: string }>().secret, first.json<{ secret: string }>().secret);
  });

  it('rotations sent at once with one If-Match and each its Idempotency-Key: the refused ones keep nothing, their retries are judged again', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    const keys = [1, 2, 3, 4].map((n) => `race-${n}-${url}`);
    const send = (key: string) => t.call('POST', `${url}/rotate-secret`, { headers: { 'if-match': etag, 'idempotency-key': key } });
    const answers = await Promise.all(keys.map(send));
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 412, 412, 412]);
    for (const [i, key] of keys.entries()) {
      const retry = await send(key);
      assert.equal(retry.statusCode, answers[i]!.statusCode, retry.payload);
      // The winner's is its kept outcome; a refusal was kept nowhere, so its retry ran again (and the tag is stale).
      assert.equal(retry.headers['idempotent-replayed'], answers[i]!.statusCode === 200 ? 'true' : undefined);
    }
    // A refused key is free: sent with the endpoint's tag now, the rotation is made under it.
    const loser = keys[answers.findIndex((answer) => answer.statusCode === 412)]!;
    const fresh = await t.call('POST', `${url}/rotate-secret`, { headers: { 'if-match': await etagOf(url), 'idempotency-key': loser } });
    assert.equal(fresh.statusCode, 200, fresh.payload);
  });

  it('POST /webhooks/{id}/replay: only to the endpoint as read (If-Match: its URL, its events), else 412', async () => {
    const url = `/webhooks/${await newEndpoint()}`;
    const etag = await etagOf(url);
    const body = { since: '2026-01-01T00:00:00Z' };
    assert.equal((await t.call('POST', `${url}/replay`, { body, headers: { 'if-match': etag } })).statusCode, 202);
    await t.call('PATCH', url, { body: { url: 'http://127.0.0.1:9/elsewhere' } });
    const refused = await t.call('POST', `${url}/replay`, { body, headers: { 'if-match': etag } });
    assert.equal(refused.statusCode, 412);
    assertErrorShape(refused.json(), 412, 'precondition_failed');
    assert.equal((await t.call('POST', `${url}/replay`, { body, headers: { 'if-match': await etagOf(url) } })).statusCode, 202);
    assert.equal((await t.call('POST', `${url}/replay`, { body, headers: { 'if-match': '*' } })).statusCode, 202);
    assert.equal((await t.call('POST', '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/replay', { body, headers: { 'if-match': etag } })).statusCode, 404);
  });

  it('DELETE /tokens/{id}: 412 and active on a stale If-Match, revoked on the current one', async () => {
    const id = (await t.call('POST', '/tokens', { body: { name: 'if-match', scopes: ['plants:read'] } })).json<{ id: string }>().id;
    const url = `/tokens/${id}`;
    const etag = await etagOf(url);
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    for (const stale of [`W/${etag}`, '"no-such-tag"']) {
      const refused = await t.call('DELETE', url, { headers: { 'if-match': stale } });
      assert.equal(refused.statusCode, 412, `If-Match: ${stale}`);
      assertErrorShape(refused.json(), 412, 'precondition_failed');
    }
    assert.equal((await t.call('GET', url)).json<{ revokedAt: unknown }>().revokedAt, null, 'still active');
    assert.equal((await t.call('DELETE', url, { headers: { 'if-match': etag } })).statusCode, 204);
    assert.equal((await t.call('DELETE', url, { headers: { 'if-match': etag } })).statusCode, 404, 'revoked already: 404, the precondition aside');
  });

  it('the document declares If-Match, the 412 and the strong ETag', () => {
    const writes = [
      'patch /webhooks/{id}',
      'delete /webhooks/{id}',
      'post /webhooks/{id}/rotate-secret',
      'post /webhooks/{id}/replay',
      'delete /tokens/{id}',
    ];
    for (const key of writes) {
      const op = operation(doc, key);
      assert.ok(
        (op.parameters as Json[]).some((p) => p.in === 'header' && p.name === 'if-match'),
        `${key} If-Match`,
      );
      assert.deepEqual(op.responses['412']['x-error-codes'], ['precondition_failed'], key);
    }
    for (const key of ['get /webhooks/{id}', 'get /tokens/{id}'])
      assert.match(operation(doc, key).responses['200'].headers.ETag.description, /strong/);
  });
});
