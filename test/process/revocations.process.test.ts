import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { startServer } from '../process.js';
import { until } from '../toolkit.js';

const ADMIN = 'revocation-admin-token-0123456789abcdef';

/** A request on a connection of its own (the supervisor hands each connection to the next worker in turn): its status. */
function fresh(url: string, method: string, token: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) };
    const sent = httpRequest(url, { method, agent: false, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/**
 * A token revoked with DELETE /tokens/{id} is refused by every worker of the instance from the 204 on
 * (process/revocations.ts): each worker caches a stored token's look-up for up to 500 ms, and the
 * revoking worker's sibling kept accepting it that long.
 */
test('with two workers, a token revoked over the API is refused by both from the answer on', async () => {
  const server = await startServer(after, {
    env: { DATABASE_URL: `file:${join(tempDir(after), 'p.db')}`, PLANT_STORE_TOKENS: ADMIN, WEB_CONCURRENCY: '2' },
  });
  await until(() => (server.stdout.match(/Server listening at/g) ?? []).length === 2, 'two workers to listen', { timeoutMs: 30_000 });
  for (let round = 0; round < 3; round++) {
    const made = await fresh(`${server.url}/tokens`, 'POST', ADMIN, JSON.stringify({ name: `reader-${round}`, scopes: ['plants:read'] }));
    assert.equal(made.status, 201, made.text);
    const { id, secret } = JSON.parse(made.text) as { id: string; secret: string };
    // Accepted, and so cached, by both workers (connections alternate between them).
    for (let i = 0; i < 4; i++) assert.equal((await fresh(`${server.url}/token`, 'GET', secret)).status, 200);
    assert.equal((await fresh(`${server.url}/tokens/${id}`, 'DELETE', ADMIN)).status, 204);
    const after204 = await Promise.all(Array.from({ length: 10 }, () => fresh(`${server.url}/token`, 'GET', secret)));
    assert.deepEqual(
      after204.map((answer) => answer.status),
      Array(10).fill(401),
      `round ${round}`,
    );
  }
  assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
});
