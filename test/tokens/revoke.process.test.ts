import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { REVOKED } from '../../src/events/credentials.js';
import { rawStream } from '../events/sse.js';
import { tempDir } from '../helpers.js';
import { firstToken, request, startServer } from '../process.js';
import { becomesRefused } from '../toolkit.js';

/**
 * Tokens managed over the API of a running server, as an operator without a shell on it would: the
 * first-start token (full access, tokens:manage included) makes the others; one revoked with DELETE
 * /tokens/{id} is refused by the server soon after, and its open event stream ends, saying why.
 */

describe('tokens over the API of a running server', async () => {
  const databaseUrl = `file:${join(tempDir(after), 'tokens.db')}`;
  const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: undefined } });
  after(async () => {
    if (server.running) assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });
  // Printed once the server listens, on the other pipe than the line saying so: waited for.
  const first = await firstToken(() => server.stderr);

  const make = async (token: string, name: string, scopes: string[]) => {
    const res = await request(`${server.url}/tokens`, { method: 'POST', token, body: JSON.stringify({ name, scopes }) });
    assert.equal(res.status, 201, res.text);
    assert.match(res.headers.get('location') ?? '', /^\/tokens\/[0-9a-f]{12}$/);
    return JSON.parse(res.text) as { id: string; secret: string };
  };

  test('the first-start token may manage tokens', async () => {
    assert.match(first, /^ps_[A-Za-z0-9_-]{43}$/);
    const info = await request(`${server.url}/token`, { token: first });
    assert.ok((JSON.parse(info.text) as { scopes: string[] }).scopes.includes('tokens:manage'), info.text);
  });

  test('a token revoked over the API is refused, and its open event stream ends, saying why', { timeout: 120_000 }, async () => {
    const admin = await make(first, 'admin', ['tokens:manage', 'events:read']);
    const browser = await make(admin.secret, 'browser', ['events:read']);
    const stream = await rawStream(`${server.url}/events`, { authorization: `Bearer ${browser.secret}` });
    assert.equal(stream.status, 200);
    const other = await rawStream(`${server.url}/events`, { authorization: `Bearer ${admin.secret}` });
    assert.equal(other.status, 200);

    const revoked = await request(`${server.url}/tokens/${browser.id}`, { method: 'DELETE', token: admin.secret });
    assert.equal(revoked.status, 204, revoked.text);
    // The test's time-out fails a stream that never ends, rather than hanging.
    assert.equal(await stream.ended, true);
    assert.ok(stream.text().endsWith(`: ${REVOKED}\n\n`), stream.text());
    await becomesRefused(`${server.url}/events`, browser.secret);
    const refused = await request(`${server.url}/events`, { token: browser.secret });
    assert.match(refused.text, /unknown or revoked bearer token/);

    // The admin's own stream lives on until the admin revokes itself, which it must say it means.
    const itself = await request(`${server.url}/tokens/${admin.id}`, { method: 'DELETE', token: admin.secret });
    assert.equal(itself.status, 409, itself.text);
    assert.equal((await request(`${server.url}/tokens/${admin.id}?self=true`, { method: 'DELETE', token: admin.secret })).status, 204);
    assert.equal(await other.ended, true);
    assert.ok(other.text().endsWith(`: ${REVOKED}\n\n`), other.text());
    await becomesRefused(`${server.url}/events`, admin.secret);

    const listed = JSON.parse((await request(`${server.url}/tokens`, { token: first })).text) as Array<{ name: string; revokedAt: string | null }>;
    assert.deepEqual(
      listed.map(({ name, revokedAt }) => [name, revokedAt === null]),
      [
        ['initial', true],
        ['admin', false],
        ['browser', false],
      ],
    );
  });
});
