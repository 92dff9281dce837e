import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createToken, hashToken } from '../../src/auth/tokens.js';
import { SCOPES, type Scope } from '../../src/model/scopes.js';
import { assertError, testApp, TOKEN } from '../helpers.js';

/**
 * POST /tokens: a token with tokens:manage makes tokens with some of its own scopes; the secret is in the
 * answer once. Names and scopes follow the CLI's rules. Runs on PostgreSQL too (test/store/postgres/http.process.test.ts).
 */

interface Created {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
  secret: string;
}

describe('POST /tokens', async () => {
  const t = await testApp(after);
  const create = (body: unknown, token: string = TOKEN) => t.call('POST', '/tokens', { body, token });

  it('makes a token: 201 with the secret once, a Location, and the token works at once with just its scopes', async () => {
    const res = await create({ name: 'reporting', scopes: ['plants:read'] });
    assert.equal(res.statusCode, 201, res.payload);
    assert.match(String(res.headers['content-type']), /^application\/json\b/);
    const made = res.json<Created>();
    assert.deepEqual(Object.keys(made).sort(), ['createdAt', 'id', 'name', 'revokedAt', 'scopes', 'secret']);
    assert.match(made.id, /^[0-9a-f]{12}$/);
    assert.equal(made.name, 'reporting');
    assert.deepEqual(made.scopes, ['plants:read']);
    assert.equal(made.revokedAt, null);
    assert.match(made.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(made.secret, /^ps_[A-Za-z0-9_-]{43}$/);
    assert.equal(res.headers.location, `/tokens/${made.id}`);
    // Only the hash is stored: the store finds the token by the secret's hash, and holds no secret.
    const stored = await t.store.tokens.findActiveByHash(hashToken(made.secret));
    assert.equal(stored?.id, made.id);
    assert.equal((await t.call('GET', '/plants', { token: made.secret })).statusCode, 200);
    assertError(await t.call('POST', '/plants', { token: made.secret, body: { id: 1, name: 'x' } }), 403, 'plants:write');
    assert.deepEqual((await t.call('GET', '/token', { token: made.secret })).json(), { id: made.id, scopes: ['plants:read'] });
    // The Location is the token, without its secret.
    const located = await t.call('GET', String(res.headers.location));
    assert.equal(located.statusCode, 200);
    const { secret: _secret, ...shown } = made;
    assert.deepEqual(located.json(), shown);
  });

  it('grants only scopes the maker holds: 403 naming every scope it lacks, and nothing made', async () => {
    const maker = await t.tokenWith('tokens:manage', 'plants:read');
    const before = await t.store.tokens.count();
    const res = await create({ name: 'climber', scopes: ['plants:read', 'webhooks:manage', 'events:read'] }, maker);
    const message = assertError(res, 403, 'webhooks:manage and events:read');
    assert.match(message, /can grant only scopes it holds itself/);
    assert.doesNotMatch(message, /plants:read/, 'a scope it holds is not named');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store", error="insufficient_scope", scope="webhooks:manage events:read"');
    assertError(await create({ name: 'climber', scopes: ['plants:write'] }, maker), 403, 'body.scopes asks for plants:write, which this token lacks');
    assert.equal(await t.store.tokens.count(), before);
    // Within its own scopes it may make any subset, tokens:manage included.
    const made = await create({ name: 'within', scopes: ['plants:read', 'tokens:manage'] }, maker);
    assert.equal(made.statusCode, 201, made.payload);
    assert.deepEqual(made.json<Created>().scopes, ['plants:read', 'tokens:manage']);
  });

  it('tokens:manage alone makes nothing, not even another token that only manages tokens', async () => {
    const manager = await t.tokenWith('tokens:manage');
    const before = await t.store.tokens.count();
    for (const scopes of [...SCOPES.map((scope) => [scope]), ['tokens:manage', 'plants:read']]) {
      const res = await create({ name: `made-${scopes.join('-')}`, scopes }, manager);
      assertError(res, 403, 'this token holds tokens:manage alone, which makes no token');
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store", error="insufficient_scope"');
    }
    assert.equal(await t.store.tokens.count(), before, 'nothing made');
    // It still lists and revokes (to stop a leaked token).
    assert.equal((await t.call('GET', '/tokens', { token: manager })).statusCode, 200);
    // With one scope more it makes tokens within its scopes, one that only manages tokens included.
    const broader = await t.tokenWith('tokens:manage', 'plants:read');
    const res = await create({ name: 'another-manager', scopes: ['tokens:manage'] }, broader);
    assert.equal(res.statusCode, 201, res.payload);
  });

  it('a full-access token (static, or one holding every scope) may grant every scope', async () => {
    const res = await create({ name: 'everything', scopes: [...SCOPES] });
    assert.equal(res.statusCode, 201, res.payload);
    const all = res.json<Created>().secret;
    const again = await create({ name: 'everything-again', scopes: [...SCOPES].reverse() }, all);
    assert.equal(again.statusCode, 201, again.payload);
    assert.deepEqual(again.json<Created>().scopes, [...SCOPES].reverse(), 'kept in the order given');
  });

  it('refuses a name an active token has: 409 naming it; a revoked token frees its name', async () => {
    const first = (await create({ name: 'ci', scopes: ['plants:read'] })).json<Created>();
    const res = await create({ name: 'ci', scopes: ['plants:write'] });
    assertError(res, 409, 'an active token is already named "ci"');
    assert.equal((await t.call('DELETE', `/tokens/${first.id}`)).statusCode, 204);
    const again = await create({ name: 'ci', scopes: ['plants:write'] });
    assert.equal(again.statusCode, 201, again.payload);
    assert.notEqual(again.json<Created>().id, first.id);
    // A token made in the store (the CLI's way) holds its name against the API too.
    await createToken(t.store.tokens, 'made-by-cli', ['plants:read']);
    assertError(await create({ name: 'made-by-cli', scopes: ['plants:read'] }), 409, '"made-by-cli"');
  });

  it('validates the name as the CLI does: 400 naming the field', async () => {
    const scopes = ['plants:read'];
    assertError(await create({ name: '', scopes }), 400, 'body.name must not be empty');
    assertError(await create({ name: 'n'.repeat(65), scopes }), 400, 'body.name must be at most 64 characters long');
    assert.equal((await create({ name: 'n'.repeat(64), scopes })).statusCode, 201, '64 characters are enough');
    // Characters are code points: 64 emoji (128 UTF-16 units) are 64 characters.
    assert.equal((await create({ name: '🌱'.repeat(64), scopes })).statusCode, 201);
    assertError(await create({ name: '🌵'.repeat(65), scopes }), 400, 'body.name must be at most 64 characters long');
    for (const name of ['line\nbreak', 'tab\there', 'nul\u0000', 'escape\u001b[31m', 'del\u007f', 'c1\u0085']) {
      assertError(await create({ name, scopes }), 400, 'body.name must not contain control characters');
    }
    assertError(await create({ name: 'lone \ud800 surrogate', scopes }), 400, 'unpaired UTF-16 surrogate');
    // Nothing that shows as something else, or as nothing: bidi controls, invisible characters, look-alike spaces, line
    // separators, a space at either end ("initial\u00A0" and "initial " would sit in a list beside "initial").
    const invisible = [
      'deploy\u202Egnp.exe',
      'a\u2066b\u2069',
      'a\u061Cb',
      'zero\u200Bwidth',
      'a\u200Db',
      'a\u2060b',
      '\uFEFFbom',
      'soft\u00ADhyphen',
    ];
    for (const name of [...invisible, 'initial\u00A0', 'a\u2007b', 'a\u3000b', 'line\u2028sep', 'para\u2029sep', 'initial ', ' initial', ' ']) {
      assertError(
        await create({ name, scopes }),
        400,
        'body.name must not contain control characters (line breaks, tabs…), invisible or direction-changing characters',
      );
    }
    assert.equal((await t.call('GET', '/tokens')).json<Array<{ name: string }>>().filter((token) => token.name.startsWith('initial')).length, 0);
    assertError(await create({ scopes }), 400, 'body.name is required');
    assertError(await create({ name: 5, scopes }), 400, 'body.name must be a string');
    // Spaces and any printable text are fine.
    assert.equal((await create({ name: 'Grace’s laptop — CI', scopes })).statusCode, 201);
  });

  it('validates the scopes: at least one, known names only, each once', async () => {
    assertError(await create({ name: 's1', scopes: [] }), 400, 'body.scopes must not be empty');
    assertError(await create({ name: 's2', scopes: ['plants:admin'] }), 400, 'body.scopes[0] must be one of plants:read, plants:write');
    assertError(
      await create({ name: 's3', scopes: ['plants:read', 'plants:read'] }),
      400,
      'body.scopes must not repeat an item (items 0 and 1 are the same)',
    );
    assertError(await create({ name: 's4' }), 400, 'body.scopes is required');
    assertError(await create({ name: 's5', scopes: 'plants:read' }), 400, 'body.scopes must be an array');
    assertError(await create({ name: 's6', scopes: [null] }), 400, 'body.scopes[0]');
  });

  it('unknown fields as on every write: ignored and said in a Warning, refused under Prefer: handling=strict; a body that is not an object, and other media types', async () => {
    const strict = { prefer: 'handling=strict' };
    const expiring = { name: 'x1', scopes: ['plants:read'], expires: '2030-01-01' };
    const refused = await t.call('POST', '/tokens', { body: expiring, headers: strict });
    assertError(refused, 400, 'body has an unknown field "expires"', 'unknown_field');
    assert.equal(refused.json<{ field: string }>().field, 'body.expires');
    assert.equal(refused.headers['preference-applied'], 'handling=strict');
    assert.equal((await t.call('GET', '/tokens')).json<Array<{ name: string }>>().filter((token) => token.name === 'x1').length, 0, 'nothing made');
    const ignored = await create(expiring);
    assert.equal(ignored.statusCode, 201);
    assert.equal(ignored.headers.warning, '299 - "unknown field \\"expires\\" was ignored"');
    const lenient = await t.call('POST', '/tokens', { body: { ...expiring, name: 'x1b' }, headers: { prefer: 'handling=lenient' } });
    assert.equal(lenient.statusCode, 201);
    assert.equal(lenient.headers['preference-applied'], 'handling=lenient');
    // A typo of a required field is refused either way, naming the field meant.
    assertError(await create({ name: 'x2', scope: ['plants:read'] }), 400, 'body.scopes is required: did you mean "scopes"?', 'validation_failed');
    // A secret of one's own is never taken: the service makes it.
    const own = await create({ name: 'x3', scopes: ['plants:read'], secret: 'ps_mine' });
    assert.equal(own.statusCode, 201);
    assert.notEqual(own.json<{ secret: string }>().secret, 'ps_mine');
    assert.match(String(own.headers.warning), /unknown field \\"secret\\" was ignored/);
    assertError(await create([]), 400, 'body must be an object');
    assertError(await t.call('POST', '/tokens', { body: 'name=x', headers: { 'content-type': 'text/plain' } }), 415);
    assertError(await t.call('POST', '/tokens', { body: '{"name":', headers: { 'content-type': 'application/json' } }), 400);
  });

  it('several problems are named in one answer', async () => {
    const message = assertError(
      await t.call('POST', '/tokens', { body: { name: '', scopes: [], extra: true }, headers: { prefer: 'handling=strict' } }),
      400,
    );
    for (const part of ['body.name must not be empty', 'body.scopes must not be empty', 'unknown field "extra"'])
      assert.ok(message.includes(part), message);
  });

  it('needs a token with tokens:manage: 401 without one, 403 without the scope, before the body is read', async () => {
    assertError(await t.call('POST', '/tokens', { token: null, body: { name: 'n', scopes: ['plants:read'] } }), 401, 'missing bearer token');
    const reader = await t.tokenWith('plants:read', 'plants:write', 'webhooks:manage', 'events:read');
    const res = await create({ name: 'n', scopes: ['plants:read'] }, reader);
    assertError(res, 403, 'this token lacks the scope tokens:manage that this operation needs');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store", error="insufficient_scope", scope="tokens:manage"');
    // An invalid body from a token without the scope learns nothing about validation.
    assertError(await create({ name: '' }, reader), 403, 'tokens:manage');
  });
});
