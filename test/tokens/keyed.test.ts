import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

/**
 * POST /tokens under an Idempotency-Key (docs/idempotency.md): the token is made once, and every retry gets
 * the first answer again, its secret included, byte for byte; a name refused is kept as refused. Runs on
 * PostgreSQL too (test/store/postgres/http.process.test.ts).
 */

describe('POST /tokens with an Idempotency-Key', async () => {
  const t = await testApp(after);
  const create = (body: unknown, key: string, headers: Record<string, string> = {}) =>
    t.call('POST', '/tokens', { body, headers: { 'idempotency-key': key, ...headers } });
  const stored = async (name: string) => (await t.store.tokens.list()).filter((token) => token.name === name);

  it('makes the token once: a retry gets the same answer, the same id and secret, marked replayed', async () => {
    const first = await create({ name: 'ci', scopes: ['plants:read'] }, 'k-ci');
    assert.equal(first.statusCode, 201, first.payload);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const retry = await create({ name: 'ci', scopes: ['plants:read'] }, 'k-ci');
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.payload, first.payload, 'the same bytes, the secret included');
    assert.equal(retry.headers.location, first.headers.location);
    assert.equal((await stored('ci')).length, 1, 'one token made');
    const { secret } = first.json<{ secret: string }>();
    assert.equal((await t.call('GET', '/plants', { token: secret })).statusCode, 200, 'the secret works');
  });

  it('keeps the 409 of a name taken, and answers it again even once the name is free', async () => {
    assert.equal((await t.call('POST', '/tokens', { body: { name: 'taken', scopes: ['plants:read'] } })).statusCode, 201);
    assertError(await create({ name: 'taken', scopes: ['plants:read'] }, 'k-taken'), 409, 'an active token is already named "taken"');
    const [token] = await stored('taken');
    assert.equal((await t.call('DELETE', `/tokens/${token!.id}`)).statusCode, 204);
    const retry = await create({ name: 'taken', scopes: ['plants:read'] }, 'k-taken');
    assertError(retry, 409, 'already named "taken"');
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal((await stored('taken')).filter((made) => made.revokedAt === null).length, 0, 'nothing made by the retry');
  });

  it('answers 422 to another request with the key, and makes nothing', async () => {
    assert.equal((await create({ name: 'one', scopes: ['plants:read'] }, 'k-one')).statusCode, 201);
    assertError(await create({ name: 'two', scopes: ['plants:read'] }, 'k-one'), 422, 'k-one');
    assert.deepEqual(await stored('two'), []);
  });

  it('keeps nothing for a request refused before its write: a scope the maker lacks, a bad body', async () => {
    const reader = await t.tokenWith('tokens:manage', 'plants:read');
    const lacking = await t.call('POST', '/tokens', {
      body: { name: 'w', scopes: ['plants:write'] },
      token: reader,
      headers: { 'idempotency-key': 'k-w' },
    });
    assertError(lacking, 403, 'plants:write');
    assertError(await create({ name: '', scopes: ['plants:read'] }, 'k-bad'), 400, 'body.name');
    const ran = await create({ name: 'fixed', scopes: ['plants:read'] }, 'k-bad');
    assert.equal(ran.statusCode, 201, 'the corrected request runs under the same key');
    assert.equal(ran.headers['idempotent-replayed'], undefined);
  });

  it('keys are per token: another token with the same key makes its own', async () => {
    const other = await t.tokenWith('tokens:manage', 'plants:read');
    const mine = await create({ name: 'per-key', scopes: ['plants:read'] }, 'k-shared');
    const theirs = await t.call('POST', '/tokens', {
      body: { name: 'per-key-2', scopes: ['plants:read'] },
      token: other,
      headers: { 'idempotency-key': 'k-shared' },
    });
    assert.equal(mine.statusCode, 201);
    assert.equal(theirs.statusCode, 201);
    assert.notEqual(mine.json<{ id: string }>().id, theirs.json<{ id: string }>().id);
  });
});
