import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createClient } from '@plant-store/client';
import { TOKEN, testApp, assertErrorShape } from '../helpers.js';
import { VERSION } from '../../src/version.js';

/** The ids of a JSON text as written, digits and all. */
function idsIn(text: string): string[] {
  return [...text.matchAll(/"id":(-?\d+)/g)].map((match) => match[1]!);
}

describe('the client against a live server', async () => {
  const t = await testApp(after);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const client = createClient({ baseUrl, headers: { Authorization: `Bearer ${TOKEN}` } });

  /** The text of every request body the client sends, in order. */
  const sentBodies: string[] = [];
  client.use({
    async onRequest({ request }) {
      if (request.body) sentBodies.push(await request.clone().text());
    },
  });

  it('creates a plant: POST /plants answers the Plant, {name, tag}', async () => {
    const { data, error, response } = await client.POST('/plants', { body: { id: 1, name: 'Monstera', tag: 'tropical' } });
    assert.equal(response.status, 200);
    assert.equal(error, undefined);
    assert.deepEqual(data, { name: 'Monstera', tag: 'tropical' });
    assert.deepEqual((await t.store.plants.get(1))?.plant, { id: 1, name: 'Monstera', tag: 'tropical' });
  });

  it("sends an Idempotency-Key of the caller's: a retry gets the first answer, marked replayed, and nothing is done twice", async () => {
    const key = crypto.randomUUID();
    const register = () =>
      client.POST('/webhooks', { params: { header: { 'idempotency-key': key } }, body: { url: 'https://93.184.215.14/client-hook' } });
    const first = await register();
    const retry = await register();
    assert.equal(first.response.status, 201);
    assert.deepEqual(retry.data, first.data, 'the same endpoint and secret');
    assert.equal(retry.response.headers.get('idempotent-replayed'), 'true');
    const other = await client.POST('/webhooks', { params: { header: { 'idempotency-key': key } }, body: { url: 'https://93.184.215.14/other' } });
    assert.equal(other.response.status, 422);
    assert.match(other.error?.message ?? '', /Idempotency-Key/);
  });

  it('reads it: GET /plants/{id}, a safe id as a number', async () => {
    const { data, error, response } = await client.GET('/plants/{id}', { params: { path: { id: 1 } } });
    assert.equal(response.status, 200);
    assert.equal(error, undefined);
    assert.deepEqual(data, { id: 1, name: 'Monstera', tag: 'tropical' });
  });

  it('lists a page at a time: limit, after, and the Link header while more remain', async () => {
    for (const id of [10, 11, 12, 13, 14]) {
      const { response } = await client.POST('/plants', { body: { id, name: `p${id}`, tag: 'paged' } });
      assert.equal(response.status, 200);
    }
    const pages: Array<Array<number | bigint>> = [];
    let after: number | bigint | undefined;
    while (true) {
      const { data, response } = await client.GET('/plants', { params: { query: { tag: ['paged'], limit: 2, after } } });
      assert.ok(data, `status ${response.status}`);
      pages.push(data.map((plant) => plant.id));
      const link = response.headers.get('link');
      if (link === null) break;
      assert.match(link, /^<\/plants\?[^>]*limit=2[^>]*>; rel="next"$/);
      after = data.at(-1)!.id;
    }
    assert.deepEqual(pages, [[10, 11], [12, 13], [14]]);
  });

  it('finds plants: q, several tags and sort in the query, the cursor of each Link followed', async () => {
    for (const [id, name, tag] of [
      [30, 'Boston Fern', 'fern'],
      [31, 'Staghorn FERN', 'tropical'],
      [32, 'Fernleaf Yarrow', 'other'],
      [33, 'Asparagus fern', 'fern'],
    ] as const) {
      assert.equal((await client.POST('/plants', { body: { id, name, tag } })).response.status, 200);
    }
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const { data, response } = await client.GET('/plants', {
        params: { query: { q: 'FERN', tag: ['fern', 'tropical'], sort: '-name', limit: 2, cursor } },
      });
      assert.ok(data, `status ${response.status}`);
      names.push(...data.map((plant) => plant.name));
      const link = response.headers.get('link');
      cursor = link === null ? undefined : (new URL(/<([^>]+)>/.exec(link)![1]!, baseUrl).searchParams.get('cursor') ?? undefined);
    } while (cursor !== undefined);
    assert.deepEqual(names, ['Staghorn FERN', 'Boston Fern', 'Asparagus fern']);
  });

  it('patches: a merge patch changes the name and "tag": null removes the tag', async () => {
    const { data, response } = await client.PATCH('/plants/{id}', { params: { path: { id: 1 } }, body: { name: 'Monstera deliciosa', tag: null } });
    assert.equal(response.status, 200);
    assert.deepEqual(data, { id: 1, name: 'Monstera deliciosa' });
  });

  it('replaces or creates with PUT: 201 with Location, then 200', async () => {
    const created = await client.PUT('/plants/{id}', { params: { path: { id: 20 } }, body: { name: 'Ficus' } });
    assert.equal(created.response.status, 201);
    assert.equal(created.response.headers.get('location'), '/plants/20');
    assert.deepEqual(created.data, { id: 20, name: 'Ficus' });
    const replaced = await client.PUT('/plants/{id}', { params: { path: { id: 20 } }, body: { id: 20, name: 'Ficus lyrata' } });
    assert.equal(replaced.response.status, 200);
    assert.deepEqual(replaced.data, { id: 20, name: 'Ficus lyrata' });
  });

  it('deletes: 204 and no data, then the plant is gone', async () => {
    const { data, error, response } = await client.DELETE('/plants/{id}', { params: { path: { id: 20 } } });
    assert.equal(response.status, 204);
    assert.equal(data, undefined);
    assert.equal(error, undefined);
    assert.equal(await t.store.plants.get(20), undefined);
  });

  it('a 404: error is the Error shape, the status is on response.status', async () => {
    const { data, error, response } = await client.GET('/plants/{id}', { params: { path: { id: 20 } } });
    assert.equal(response.status, 404);
    assert.equal(data, undefined);
    assert.deepEqual(error, { error: 404, message: 'no plant with id 20', code: 'not_found' });
  });

  it('a 401 without a token: the Error shape, and the WWW-Authenticate header on the response', async () => {
    const anonymous = createClient({ baseUrl });
    const { data, error, response } = await anonymous.GET('/plants');
    assert.equal(response.status, 401);
    assert.equal(data, undefined);
    assert.equal(error?.error, 401);
    assert.equal(typeof error?.message, 'string');
    assertErrorShape(error, 401, 'unauthorized');
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="plant-store"/);
  });

  it('a 412 with If-None-Match: * (a header parameter) on an existing id', async () => {
    const { error, response } = await client.POST('/plants', { body: { id: 1, name: 'Other' }, params: { header: { 'if-none-match': '*' } } });
    assert.equal(response.status, 412);
    assert.equal(error?.error, 412);
  });

  it('round-trips the id 9223372036854775807: sent as a plain JSON integer, read back as that bigint', async () => {
    const id = 9223372036854775807n;
    sentBodies.length = 0;
    const created = await client.POST('/plants', { body: { id, name: 'Largest' } });
    assert.equal(created.response.status, 200, JSON.stringify(created.error));
    assert.deepEqual(sentBodies, ['{"id":9223372036854775807,"name":"Largest"}']);
    assert.deepEqual((await t.store.plants.get(id))?.plant, { id, name: 'Largest' });

    const read = await client.GET('/plants/{id}', { params: { path: { id } } });
    assert.deepEqual(read.data, { id, name: 'Largest' });
    assert.equal(typeof read.data?.id, 'bigint');

    const listed = await client.GET('/plants', { params: { query: { after: 9223372036854775806n } } });
    assert.deepEqual(listed.data, [{ id, name: 'Largest' }]);

    const patched = await client.PATCH('/plants/{id}', { params: { path: { id } }, body: { id, tag: 'max' } });
    assert.deepEqual(patched.data, { id, name: 'Largest', tag: 'max' });
  });

  it('keeps every id exact across the int64 range, a number when safe and a bigint beyond', async () => {
    const ids = [-(2n ** 63n), -(2n ** 53n) - 1n, -(2n ** 53n) + 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n];
    for (const id of ids) {
      const { response } = await client.POST('/plants', { body: { id, name: `n${id}` } });
      assert.equal(response.status, 200, String(id));
    }
    const { data, response } = await client.GET('/plants', { params: { query: { limit: 1000 } } });
    assert.ok(data);
    const raw = idsIn(await (await fetch(response.url, { headers: { authorization: `Bearer ${TOKEN}` } })).text());
    assert.deepEqual(
      data.map((plant) => String(plant.id)),
      raw,
    );
    const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
    for (const { id } of data) {
      const safe = BigInt(id) >= -MAX_SAFE && BigInt(id) <= MAX_SAFE;
      assert.equal(typeof id, safe ? 'number' : 'bigint', String(id));
    }
    for (const id of ids) assert.ok(raw.includes(String(id)), String(id));
  });

  it('manages tokens: POST /tokens (the secret once), GET /tokens, GET and DELETE /tokens/{id}, self=true for its own', async () => {
    const made = await client.POST('/tokens', { body: { name: 'from-the-client', scopes: ['tokens:manage', 'plants:read'] } });
    assert.equal(made.response.status, 201);
    assert.ok(made.data);
    const { id, secret, scopes, revokedAt } = made.data;
    assert.deepEqual(scopes, ['tokens:manage', 'plants:read']);
    assert.equal(revokedAt, null);
    const own = createClient({ baseUrl, headers: { Authorization: `Bearer ${secret}` } });
    const listed = await own.GET('/tokens', { params: { query: { state: 'active', limit: 1000 } } });
    assert.ok(listed.data?.some((token) => token.id === id && !('secret' in token)));
    assert.equal((await own.GET('/tokens/{id}', { params: { path: { id } } })).data?.name, 'from-the-client');
    const refused = await own.DELETE('/tokens/{id}', { params: { path: { id } } });
    assert.equal(refused.response.status, 409);
    assert.match(refused.error?.message ?? '', /self=true/);
    const revoked = await own.DELETE('/tokens/{id}', { params: { path: { id }, query: { self: true } } });
    assert.equal(revoked.response.status, 204);
    assert.notEqual((await client.GET('/tokens/{id}', { params: { path: { id } } })).data?.revokedAt, null);
  });

  it('reaches the public operations without options', async () => {
    const { data } = await client.GET('/healthz');
    assert.deepEqual(data, { status: 'ok', version: VERSION });
  });

  it('sends writes as Prefer: handling=strict: an unknown field is refused, 400 naming it, nothing written', async () => {
    const body = { id: 424242, name: 'Typo tag', tga: 'tropical' } as unknown as { id: number; name: string };
    const { error, response } = await client.POST('/plants', { body });
    assert.equal(response.status, 400);
    assert.match(error?.message ?? '', /unknown field "tga"/);
    assert.equal(response.headers.get('preference-applied'), 'handling=strict');
    assert.equal(await t.store.plants.get(424242), undefined);
  });

  it("handling: 'lenient' sends the service's own default: written, the field said in a Warning", async () => {
    const lenient = createClient({ baseUrl, headers: { Authorization: `Bearer ${TOKEN}` }, handling: 'lenient' });
    const body = { id: 424243, name: 'Typo tag', tga: 'tropical' } as unknown as { id: number; name: string };
    const { data, response } = await lenient.POST('/plants', { body });
    assert.equal(response.status, 200);
    assert.deepEqual(data, { name: 'Typo tag' });
    assert.equal(response.headers.get('warning'), '299 - "unknown field \\"tga\\" was ignored: did you mean \\"tag\\"?"');
  });

  it("a call's own Prefer handling wins, and its other preferences are kept", async () => {
    const sent: Array<string | null> = [];
    const watching = createClient({ baseUrl, headers: { Authorization: `Bearer ${TOKEN}` } });
    watching.use({ onRequest: ({ request }) => void sent.push(request.headers.get('prefer')) });
    const body = { id: 424244, name: 'x', tga: 1 } as unknown as { id: number; name: string };
    const own = await watching.POST('/plants', { body, params: { header: { prefer: 'handling=lenient' } } });
    assert.equal(own.response.status, 200);
    await watching.GET('/plants', { params: { header: { prefer: 'count=exact' } } });
    await watching.PUT('/plants/{id}', { params: { path: { id: 424244 }, header: { prefer: 'return=minimal' } }, body: { name: 'y' } });
    assert.deepEqual(sent, ['handling=lenient', 'count=exact', 'return=minimal, handling=strict']);
  });
});
