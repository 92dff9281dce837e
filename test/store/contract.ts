import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PageKey, Store } from '../../src/store/store.js';
import { listPlants } from '../helpers.js';
import { until } from '../toolkit.js';

/**
 * The behaviour every store implementation must have. Each implementation's test file calls this
 * with a function that opens a fresh, empty store.
 */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    it('creates, reads, replaces and deletes a plant', async () => {
      const store = await open();
      try {
        assert.equal((await store.plants.put({ id: 1, name: 'Fern', tag: 'green' })).outcome, 'created');
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'Fern', tag: 'green' });
        assert.equal((await store.plants.put({ id: 1, name: 'Moss' })).outcome, 'replaced');
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'Moss' });
        assert.equal(await store.plants.delete(1), 'deleted');
        assert.equal(await store.plants.get(1), undefined);
        assert.equal(await store.plants.delete(1), 'not-found');
      } finally {
        await store.close();
      }
    });

    it('counts its write batches and the writes in them: writes made together share a batch', async () => {
      const store = await open();
      try {
        const before = { ...store.writeBatches };
        await store.plants.put({ id: 1, name: 'alone' });
        await Promise.all([2, 3, 4, 5, 6, 7, 8, 9].map((id) => store.plants.put({ id, name: `together ${id}` })));
        const batches = store.writeBatches.batches - before.batches;
        const writes = store.writeBatches.items - before.items;
        assert.ok(writes >= 9, `every write counted: ${writes}`);
        assert.ok(batches >= 2, `the lone write had a batch of its own: ${batches}`);
        assert.ok(batches < writes, `the eight made together shared batches: ${batches} batches for ${writes} writes`);
      } finally {
        await store.close();
      }
    });

    it('keeps int64 edge ids exact, as numbers when safe and bigints beyond', async () => {
      const store = await open();
      try {
        const ids = [-(2n ** 63n), -(2n ** 53n) - 1n, 2n ** 53n + 1n, 2n ** 63n - 1n];
        for (const id of ids) await store.plants.put({ id, name: `p${id}` });
        await store.plants.put({ id: Number.MAX_SAFE_INTEGER, name: 'max safe' });
        await store.plants.put({ id: 0, name: 'zero' });
        for (const id of ids) assert.deepEqual((await store.plants.get(id))?.plant, { id, name: `p${id}` });
        const all = await listPlants(store.plants, { limit: 10 });
        assert.deepEqual(
          all.map((p) => p.id),
          [-(2n ** 63n), -(2n ** 53n) - 1n, 0, Number.MAX_SAFE_INTEGER, 2n ** 53n + 1n, 2n ** 63n - 1n],
        );
      } finally {
        await store.close();
      }
    });

    it('with ifMatch and createOnly together writes nothing: exists when the version matches, else precondition-failed', async () => {
      const store = await open();
      try {
        const { version } = (await store.plants.put({ id: 8, name: 'a' })) as { version: number };
        assert.equal((await store.plants.put({ id: 8, name: 'b' }, { createOnly: true, ifMatch: [version] })).outcome, 'exists');
        assert.equal((await store.plants.put({ id: 8, name: 'b' }, { createOnly: true, ifMatch: '*' })).outcome, 'exists');
        assert.equal((await store.plants.put({ id: 8, name: 'b' }, { createOnly: true, ifMatch: [version + 1] })).outcome, 'precondition-failed');
        assert.equal((await store.plants.put({ id: 9, name: 'b' }, { createOnly: true, ifMatch: '*' })).outcome, 'precondition-failed');
        assert.deepEqual(await store.plants.get(8), { plant: { id: 8, name: 'a' }, version });
        assert.equal(await store.plants.get(9), undefined);
      } finally {
        await store.close();
      }
    });

    it('with createOnly leaves an existing plant as it is', async () => {
      const store = await open();
      try {
        assert.equal((await store.plants.put({ id: 7, name: 'a' }, { createOnly: true })).outcome, 'created');
        assert.equal((await store.plants.put({ id: 7, name: 'b' }, { createOnly: true })).outcome, 'exists');
        assert.deepEqual((await store.plants.get(7))?.plant, { id: 7, name: 'a' });
      } finally {
        await store.close();
      }
    });

    it('pages in id order after a key, filtered by tag', async () => {
      const store = await open();
      try {
        for (let id = 1; id <= 10; id++) await store.plants.put({ id, name: `p${id}`, tag: id % 2 ? 'odd' : 'even' });
        assert.deepEqual(
          (await listPlants(store.plants, { limit: 3, after: { id: 4 } })).map((p) => p.id),
          [5, 6, 7],
        );
        assert.deepEqual(
          (await listPlants(store.plants, { limit: 10, tags: ['even'], after: { id: 4 } })).map((p) => p.id),
          [6, 8, 10],
        );
        assert.deepEqual(await listPlants(store.plants, { limit: 5, after: { id: 10 } }), []);
      } finally {
        await store.close();
      }
    });

    it('answers a page as the JSON JSON.stringify would write, for every character a plant may hold', async () => {
      const store = await open();
      try {
        // Every UTF-16 code unit but NUL and the surrogates (which no stored text holds), 200 to a name
        // (and the first 64 of them as the tag of every other plant), then some astral characters.
        const units: string[] = [];
        for (let c = 1; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) units.push(String.fromCharCode(c));
        const expected: Array<{ id: number; name: string; tag?: string }> = [];
        for (let i = 0; i * 200 < units.length; i++) {
          const name = units.slice(i * 200, i * 200 + 200).join('');
          expected.push(i % 2 ? { id: i + 1, name, tag: name.slice(0, 64) } : { id: i + 1, name });
        }
        expected.push({ id: expected.length + 1, name: '🌵 "quoted" \\ back\\slash / \u2028\u2029 😀', tag: '🌿' });
        for (const plant of expected) await store.plants.put(plant);
        let after: PageKey | undefined;
        const seen: string[] = [];
        for (;;) {
          const page = await store.plants.page({ limit: 100, after });
          seen.push(page.json);
          if (page.next === undefined) break;
          after = page.next;
        }
        assert.equal(seen.length, Math.ceil(expected.length / 100));
        seen.forEach((json, i) => assert.equal(json, JSON.stringify(expected.slice(i * 100, i * 100 + 100)), `page ${i + 1}`));
      } finally {
        await store.close();
      }
    });

    it('says where the next page starts only while more plants (of the tag) follow, with exact ids', async () => {
      const store = await open();
      try {
        assert.deepEqual(await store.plants.page({ limit: 10 }), { json: '[]', count: 0, next: undefined });
        const big = 2n ** 63n - 1n;
        for (const id of [-(2n ** 63n), 1, 2, 3, big]) await store.plants.put({ id, name: `p${id}`, ...(id === 2 ? {} : { tag: 'x' }) });
        const first = await store.plants.page({ limit: 2 });
        assert.equal(first.json, `[{"id":-9223372036854775808,"name":"p-9223372036854775808","tag":"x"},{"id":1,"name":"p1","tag":"x"}]`);
        assert.deepEqual([first.count, first.next], [2, { id: 1, name: 'p1' }]);
        const rest = await store.plants.page({ limit: 3, after: { id: 1 } });
        assert.equal(
          rest.json,
          `[{"id":2,"name":"p2"},{"id":3,"name":"p3","tag":"x"},{"id":9223372036854775807,"name":"p9223372036854775807","tag":"x"}]`,
        );
        assert.deepEqual([rest.count, rest.next], [3, undefined], 'a page that ends exactly at the last plant has no next');
        assert.deepEqual((await store.plants.page({ limit: 2, after: { id: 1 } })).next, { id: 3, name: 'p3' });
        assert.deepEqual((await store.plants.page({ limit: 1, after: { id: 3 } })).next, undefined);
        const tagged = await store.plants.page({ limit: 2, tags: ['x'], after: { id: -(2n ** 63n) } });
        assert.equal(tagged.json, `[{"id":1,"name":"p1","tag":"x"},{"id":3,"name":"p3","tag":"x"}]`);
        assert.deepEqual(tagged.next, { id: 3, name: 'p3' }, 'plant 2 is skipped: it has no tag');
        assert.deepEqual(await store.plants.page({ limit: 5, tags: ['x'], after: { id: big } }), { json: '[]', count: 0, next: undefined });
        const bigTagged = await store.plants.page({ limit: 1, tags: ['x'], after: { id: 3 } });
        assert.deepEqual([bigTagged.count, bigTagged.next], [1, undefined]);
        assert.deepEqual((await store.plants.page({ limit: 1, tags: ['x'], after: { id: 1 } })).next, { id: 3, name: 'p3' });
        assert.deepEqual((await store.plants.page({ limit: 1, tags: ['none'] })).json, '[]');
        const last = await store.plants.page({ limit: 1, sort: '-id' });
        assert.deepEqual(last.next, { id: big, name: `p${big}` }, 'ids past 2^53 come back exact, as bigints');
      } finally {
        await store.close();
      }
    });

    it('applies writes sent together in the order sent, each with its own outcome (group commit)', async () => {
      const store = await open();
      try {
        const { plants } = store;
        await plants.put({ id: 9, name: 'existing' });
        const results = await Promise.all([
          plants.put({ id: 5, name: 'a' }),
          plants.put({ id: 6, name: 'x' }),
          plants.put({ id: 5, name: 'b' }),
          plants.delete(5),
          plants.put({ id: 5, name: 'c' }),
          plants.patch(5, { tag: 't' }),
          plants.put({ id: 5, name: 'd' }, { createOnly: true }),
          plants.put({ id: 9, name: 'replaced' }),
          plants.put({ id: 9, name: 'not at that version' }, { ifMatch: [1_000_000] }),
          plants.delete(404),
          plants.put({ id: 2n ** 63n - 1n, name: 'big' }),
        ]);
        const outcome = (r: unknown) =>
          typeof r === 'string' ? r : ((r as { outcome?: string }).outcome ?? ((r as { plant?: unknown }).plant ? 'patched' : '?'));
        assert.deepEqual(results.map(outcome), [
          'created',
          'created',
          'replaced',
          'deleted',
          'created',
          'patched',
          'exists',
          'replaced',
          'precondition-failed',
          'not-found',
          'created',
        ]);
        const versions = [results[0], results[2], results[4], results[5]].map((r) => (r as { version: number }).version);
        assert.deepEqual(
          [...versions].sort((a, b) => a - b),
          versions,
          'the writes to plant 5 got increasing versions, in the order sent',
        );
        assert.equal(
          new Set(results.flatMap((r) => (typeof r === 'object' && 'version' in r ? [r.version] : []))).size,
          7,
          'every change its own version',
        );
        assert.deepEqual((await plants.get(5))?.plant, { id: 5, name: 'c', tag: 't' });
        assert.deepEqual((await plants.get(9))?.plant, { id: 9, name: 'replaced' });
        assert.deepEqual((await plants.get(6))?.plant, { id: 6, name: 'x' });
      } finally {
        await store.close();
      }
    });

    it('answers every one of many concurrent writes, the same plants written again and again', async () => {
      const store = await open();
      try {
        const writes = Array.from({ length: 500 }, (_, i) => store.plants.put({ id: i % 50, name: `n${i}`, tag: `t${i}` }));
        const results = await Promise.all(writes);
        assert.equal(results.filter((r) => r.outcome === 'created').length, 50);
        assert.equal(results.filter((r) => r.outcome === 'replaced').length, 450);
        for (let id = 0; id < 50; id++) assert.deepEqual((await store.plants.get(id))?.plant, { id, name: `n${450 + id}`, tag: `t${450 + id}` });
        assert.equal(await store.plants.count(), 50);
      } finally {
        await store.close();
      }
    });

    it('answers reads asked together, each with its own plant: found, missing, repeated, int64 edges', async () => {
      const store = await open();
      try {
        const { plants } = store;
        const edges = [-(2n ** 63n), 2n ** 53n + 1n, 2n ** 63n - 1n];
        for (const id of edges) await plants.put({ id, name: `p${id}` });
        for (let id = 1; id <= 300; id++) await plants.put(id % 3 === 0 ? { id, name: `n${id}`, tag: `t${id}` } : { id, name: `n${id}` });
        const asked: (number | bigint)[] = [...edges, 0, 301, 2n ** 53n];
        for (let id = 1; id <= 300; id++) asked.push(id, 301 - id);
        const answers = await Promise.all(asked.map((id) => plants.get(id)));
        answers.forEach((answer, i) => {
          const id = asked[i]!;
          const n = typeof id === 'bigint' ? undefined : id;
          if (id === 2n ** 53n) assert.equal(answer, undefined, 'id 2^53 (not stored)');
          else if (n === undefined) assert.deepEqual(answer?.plant, { id, name: `p${id}` }, `id ${id}`);
          else if (n < 1 || n > 300) assert.equal(answer, undefined, `id ${n}`);
          else assert.deepEqual(answer?.plant, n % 3 === 0 ? { id: n, name: `n${n}`, tag: `t${n}` } : { id: n, name: `n${n}` }, `id ${n}`);
          if (answer) assert.equal(typeof answer.version, 'number');
        });
        // A read asked after a write was answered sees it.
        await plants.put({ id: 7, name: 'after' });
        const [after, again] = await Promise.all([plants.get(7), plants.get(7)]);
        assert.equal(after?.plant.name, 'after');
        assert.equal(again?.version, after?.version);
      } finally {
        await store.close();
      }
    });

    it('reads plants by many ids at once: each answer in its id place, missing ones undefined, repeats, int64 edges exact', async () => {
      const store = await open();
      try {
        const { plants } = store;
        const edges = [-(2n ** 63n), -(2n ** 53n) - 1n, 2n ** 53n + 1n, 2n ** 63n - 1n];
        for (const id of edges) await plants.put({ id, name: `p${id}` });
        for (let id = 1; id <= 120; id++) await plants.put(id % 2 ? { id, name: `n${id}`, tag: 'odd' } : { id, name: `n${id}` });
        const versions = new Map<string, number>();
        for (const id of [...edges, 5]) versions.set(String(id), (await plants.get(id))!.version);
        const asked: Array<number | bigint> = [2n ** 63n - 1n, 5, 2n ** 53n, 5, 121, -(2n ** 63n), 0, 2n ** 53n + 1n, -(2n ** 53n) - 1n];
        const answers = await plants.getMany(asked);
        assert.equal(answers.length, asked.length, 'one answer per id, repeats included');
        assert.deepEqual(answers[0], { plant: { id: 2n ** 63n - 1n, name: `p${2n ** 63n - 1n}` }, version: versions.get(String(2n ** 63n - 1n)) });
        assert.deepEqual(answers[1], { plant: { id: 5, name: 'n5', tag: 'odd' }, version: versions.get('5') });
        assert.equal(answers[2], undefined, '2^53, one below a stored id: none');
        assert.deepEqual(answers[3], answers[1], 'a repeated id, answered again');
        assert.equal(answers[4], undefined);
        assert.deepEqual(answers[5]?.plant, { id: -(2n ** 63n), name: `p${-(2n ** 63n)}` });
        assert.equal(answers[6], undefined);
        assert.deepEqual(answers[7]?.plant, { id: 2n ** 53n + 1n, name: `p${2n ** 53n + 1n}` });
        assert.deepEqual(answers[8]?.plant, { id: -(2n ** 53n) - 1n, name: `p${-(2n ** 53n) - 1n}` });
        assert.deepEqual(await plants.getMany([]), []);
        // Asked together with other reads (on SQLite, within their one read transaction).
        const [single, many, page] = await Promise.all([plants.get(5), plants.getMany([5, 121]), plants.page({ limit: 1 })]);
        assert.deepEqual(many, [single, undefined]);
        assert.equal(page.count, 1);
        // A hundred at once (the API's most), found in the order asked, ids as numbers where safe.
        const hundred = Array.from({ length: 100 }, (_, i) => 120 - i);
        assert.deepEqual(
          (await plants.getMany(hundred)).map((answer) => answer?.plant.id),
          hundred,
        );
        // A read asked after a write was answered sees it; a deleted plant is gone.
        await plants.put({ id: 7, name: 'after' });
        await plants.delete(8);
        const [seven, eight] = await plants.getMany([7, 8]);
        assert.equal(seven?.plant.name, 'after');
        assert.equal(eight, undefined);
      } finally {
        await store.close();
      }
    });

    it('patches name and tag, removes a tag with null, and reports a missing plant', async () => {
      const store = await open();
      try {
        await store.plants.put({ id: 3, name: 'a', tag: 't' });
        const patched = async (changes: { name?: string; tag?: string | null }) => {
          const result = await store.plants.patch(3, changes);
          assert.ok(typeof result === 'object', JSON.stringify(result));
          return result.plant;
        };
        assert.deepEqual(await patched({ name: 'b' }), { id: 3, name: 'b', tag: 't' });
        assert.deepEqual(await patched({ tag: null }), { id: 3, name: 'b' });
        assert.deepEqual(await patched({ tag: 'u' }), { id: 3, name: 'b', tag: 'u' });
        assert.deepEqual((await store.plants.get(3))?.plant, { id: 3, name: 'b', tag: 'u' });
        assert.equal(await store.plants.patch(4, { name: 'x' }), 'not-found');
      } finally {
        await store.close();
      }
    });

    it('settles concurrent writes to one id to one whole plant', async () => {
      const store = await open();
      try {
        const writes = Array.from({ length: 50 }, (_, i) => store.plants.put({ id: 99, name: `n${i}`, tag: `t${i}` }));
        const outcomes = await Promise.all(writes);
        assert.equal(outcomes.filter((o) => o.outcome === 'created').length, 1);
        const plant = (await store.plants.get(99))?.plant;
        assert.ok(plant);
        assert.equal(plant.name.slice(1), plant.tag?.slice(1));
        const creates = await Promise.all(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: 100, name: `c${i}` }, { createOnly: true })));
        assert.equal(creates.filter((o) => o.outcome === 'created').length, 1);
      } finally {
        await store.close();
      }
    });

    it('stores tokens by hash, finds active ones, revokes by id or name', async () => {
      const store = await open();
      try {
        assert.equal(await store.tokens.count(), 0);
        const hash = Buffer.alloc(32, 1);
        const record = await store.tokens.create({ id: 'abc', name: 'ci', hash, scopes: ['plants:read'] });
        assert.equal(record.revokedAt, null);
        const found = await store.tokens.findActiveByHash(hash);
        assert.deepEqual(found?.scopes, ['plants:read']);
        assert.ok(found?.hash.equals(hash));
        await assert.rejects(store.tokens.create({ id: 'abd', name: 'ci', hash: Buffer.alloc(32, 2), scopes: ['plants:read'] }), /already named/);
        assert.equal(await store.tokens.revoke('ci'), true);
        assert.equal(await store.tokens.findActiveByHash(hash), undefined);
        assert.equal(await store.tokens.revoke('abc'), false);
        // A revoked token's name may be used again; both stay listed.
        await store.tokens.create({ id: 'abe', name: 'ci', hash: Buffer.alloc(32, 3), scopes: ['plants:write', 'plants:read'] });
        assert.equal((await store.tokens.list()).length, 2);
        assert.equal(await store.tokens.count(), 2);
        assert.equal(await store.tokens.revoke('abe'), true);
      } finally {
        await store.close();
      }
    });

    it('reads a token by id, active or revoked; revokes by id alone when asked (a name equal to the id left alone)', async () => {
      const store = await open();
      try {
        const target = await store.tokens.create({ id: 'c1', name: 'target', hash: Buffer.alloc(32, 6), scopes: ['tokens:manage'] });
        const namesake = await store.tokens.create({ id: 'c2', name: 'c1', hash: Buffer.alloc(32, 7), scopes: ['plants:read'] });
        assert.deepEqual(await store.tokens.get('c1'), target);
        assert.equal(await store.tokens.get('target'), undefined, 'by id, not by name');
        assert.equal(await store.tokens.get('nobody'), undefined);
        assert.equal(await store.tokens.revoke('target', { byId: true }), false, 'a name is not an id');
        assert.equal(await store.tokens.revoke('c1', { byId: true }), true);
        assert.equal((await store.tokens.get('c2'))?.revokedAt, null, 'the token named c1 is active still');
        assert.match((await store.tokens.get('c1'))?.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.equal(await store.tokens.revoke('c1', { byId: true }), false, 'revoked already');
        assert.deepEqual(await store.tokens.get('c2'), namesake);
      } finally {
        await store.close();
      }
    });

    it('lists tokens as created: same record, same createdAt, oldest first, never a hash', async () => {
      const store = await open();
      try {
        const first = await store.tokens.create({ id: 'b1', name: 'one', hash: Buffer.alloc(32, 4), scopes: ['plants:read', 'plants:write'] });
        // The second a millisecond later at least, so that createdAt orders them.
        await until(() => Date.now() > Date.parse(first.createdAt), 'the clock to pass the first token');
        const second = await store.tokens.create({ id: 'a2', name: 'two', hash: Buffer.alloc(32, 5), scopes: ['plants:write'] });
        assert.match(first.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.deepEqual(await store.tokens.list(), [first, second]);
        assert.equal(await store.tokens.revoke('one'), true);
        const [revoked] = await store.tokens.list();
        assert.match(revoked?.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      } finally {
        await store.close();
      }
    });

    it('answers ping while open, and no longer once closed: a ping asks the database', async () => {
      const store = await open();
      await store.ping();
      await store.close();
      await assert.rejects(store.ping());
    });

    it('gives every write a new version, never reused, even for the same content or after a delete', async () => {
      const store = await open();
      try {
        const versions: number[] = [];
        const write = async (result: Promise<{ outcome: string; version?: number }>) => {
          const r = await result;
          assert.ok(r.version !== undefined, JSON.stringify(r));
          versions.push(r.version);
        };
        await write(store.plants.put({ id: 1, name: 'a' }));
        await write(store.plants.put({ id: 1, name: 'a' }));
        assert.equal((await store.plants.get(1))?.version, versions[1]);
        const patched = await store.plants.patch(1, {});
        assert.ok(typeof patched === 'object');
        versions.push(patched.version);
        await store.plants.delete(1);
        await write(store.plants.put({ id: 1, name: 'a' }));
        assert.equal(new Set(versions).size, versions.length, `all different: ${versions.join(' ')}`);
        assert.deepEqual(
          [...versions].sort((a, b) => a - b),
          versions,
          'increasing',
        );
      } finally {
        await store.close();
      }
    });

    it('conditional writes: If-Match by version or *, a failed condition changes nothing', async () => {
      const store = await open();
      try {
        const created = await store.plants.put({ id: 5, name: 'v1' });
        assert.equal(created.outcome, 'created');
        const v1 = 'version' in created ? created.version : -1;
        assert.deepEqual(await store.plants.put({ id: 5, name: 'x' }, { ifMatch: [v1 + 1000] }), { outcome: 'precondition-failed' });
        const replaced = await store.plants.put({ id: 5, name: 'v2' }, { ifMatch: [v1 + 1000, v1] });
        assert.equal(replaced.outcome, 'replaced');
        const v2 = 'version' in replaced ? replaced.version : -1;
        assert.ok(v2 > v1);
        assert.deepEqual(
          await store.plants.put({ id: 6, name: 'x' }, { ifMatch: '*' }),
          { outcome: 'precondition-failed' },
          'If-Match: * and no plant',
        );
        assert.equal(await store.plants.get(6), undefined);
        assert.equal(await store.plants.patch(5, { name: 'y' }, { ifMatch: [v1] }), 'precondition-failed');
        assert.equal(await store.plants.patch(6, { name: 'y' }, { ifMatch: '*' }), 'precondition-failed');
        const patched = await store.plants.patch(5, { tag: 't' }, { ifMatch: [v2] });
        assert.ok(typeof patched === 'object');
        assert.deepEqual(patched.plant, { id: 5, name: 'v2', tag: 't' });
        assert.equal(await store.plants.delete(5, { ifMatch: [v2] }), 'precondition-failed');
        assert.equal(await store.plants.delete(6, { ifMatch: '*' }), 'precondition-failed');
        assert.deepEqual((await store.plants.get(5))?.plant, { id: 5, name: 'v2', tag: 't' }, 'nothing changed by a failed condition');
        assert.equal(await store.plants.delete(5, { ifMatch: [patched.version] }), 'deleted');
        assert.deepEqual(
          await store.plants.put({ id: 7, name: 'n' }, { ifMatch: [], createOnly: false }),
          { outcome: 'precondition-failed' },
          'an empty list never matches',
        );
      } finally {
        await store.close();
      }
    });

    it('settles concurrent conditional writes: of N writes with the same If-Match exactly one wins', async () => {
      const store = await open();
      try {
        const created = await store.plants.put({ id: 9, name: 'start' });
        const version = 'version' in created ? created.version : -1;
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: 9, name: `w${i}` }, { ifMatch: [version] })));
        const winners = results.filter((r) => r.outcome === 'replaced');
        assert.equal(winners.length, 1, JSON.stringify(results));
        const deletes = await Promise.all(Array.from({ length: 10 }, () => store.plants.delete(9, { ifMatch: '*' })));
        assert.equal(deletes.filter((r) => r === 'deleted').length, 1);
      } finally {
        await store.close();
      }
    });

    it('counts plants, all or of a tag', async () => {
      const store = await open();
      try {
        assert.equal(await store.plants.count(), 0);
        for (let id = 1; id <= 7; id++) await store.plants.put({ id, name: `p${id}`, ...(id % 3 === 0 ? { tag: 'three' } : {}) });
        assert.equal(await store.plants.count(), 7);
        assert.equal(await store.plants.count({ tags: ['three'] }), 2);
        assert.equal(await store.plants.count({ tags: ['none'] }), 0);
      } finally {
        await store.close();
      }
    });

    it('exports every plant (of a tag) in id order from one snapshot, a chunk at a time, ids exact', async () => {
      const store = await open();
      try {
        const ids = [-(2n ** 63n), -5, 0, 7, Number.MAX_SAFE_INTEGER, 2n ** 63n - 1n];
        for (const id of ids) await store.plants.put({ id, name: `p${id}`, tag: id === 7 ? 'seven' : 'other' });
        for (let id = 100; id < 2600; id++) await store.plants.put({ id, name: `bulk ${id}` });
        const snapshot = await store.plants.export({});
        // Written after the snapshot was taken: not in it.
        await store.plants.put({ id: 99_999, name: 'late' });
        await store.plants.delete(0);
        assert.equal(await snapshot.count(), 2506);
        const seen: Array<number | bigint> = [];
        let chunks = 0;
        for await (const chunk of snapshot) {
          chunks++;
          for (const plant of chunk) seen.push(plant.id);
        }
        assert.ok(chunks >= 3, `${chunks} chunks`);
        assert.equal(seen.length, 2506);
        assert.deepEqual(seen.slice(0, 5), [-(2n ** 63n), -5, 0, 7, 100]);
        assert.deepEqual(seen.slice(-2), [Number.MAX_SAFE_INTEGER, 2n ** 63n - 1n]);
        const tagged = await store.plants.export({ tags: ['seven'] });
        const all = [];
        for await (const chunk of tagged) all.push(...chunk);
        assert.deepEqual(all, [{ id: 7, name: 'p7', tag: 'seven' }]);
        // An export closed early releases its snapshot; the store keeps working.
        const early = await store.plants.export({});
        for await (const chunk of early) {
          assert.ok(chunk.length > 0);
          break;
        }
        await (await store.plants.export({})).close();
        assert.equal((await store.plants.put({ id: 1, name: 'after' })).outcome, 'created');
      } finally {
        await store.close();
      }
    });

    it('imports all or nothing: staged rows are invisible until commit, the last row of an id wins, counts are distinct ids', async () => {
      const store = await open();
      try {
        await store.plants.put({ id: 1, name: 'old one' });
        await store.plants.put({ id: 2n ** 63n - 1n, name: 'old max' });
        const session = await store.plants.startImport();
        await session.add([
          { id: 1, name: 'first 1' },
          { id: 2, name: 'two', tag: 't' },
        ]);
        await session.add([
          { id: 1, name: 'last 1', tag: 'won' },
          { id: 2n ** 63n - 1n, name: 'new max' },
          { id: -(2n ** 63n), name: 'min' },
        ]);
        assert.equal(await store.plants.get(2), undefined, 'nothing visible before the commit');
        assert.deepEqual(await session.commit({ createOnly: false }), { created: 2, replaced: 2 });
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'last 1', tag: 'won' });
        assert.deepEqual((await store.plants.get(2n ** 63n - 1n))?.plant, { id: 2n ** 63n - 1n, name: 'new max' });
        assert.deepEqual((await store.plants.get(-(2n ** 63n)))?.plant, { id: -(2n ** 63n), name: 'min' });
        await session.abort(); // after a commit: nothing happens

        const aborted = await store.plants.startImport();
        await aborted.add([{ id: 50, name: 'never' }]);
        await aborted.abort();
        assert.equal(await store.plants.get(50), undefined);

        const refused = await store.plants.startImport();
        await refused.add([
          { id: 60, name: 'new' },
          { id: 2, name: 'exists' },
        ]);
        await assert.rejects(refused.commit({ createOnly: true }), (e: Error) => e.name === 'ImportConflictError' && e.message.includes('id 2'));
        await refused.abort();
        assert.equal(await store.plants.get(60), undefined, 'create-only refused: nothing stored');
        assert.deepEqual((await store.plants.get(2))?.plant, { id: 2, name: 'two', tag: 't' });

        const empty = await store.plants.startImport();
        assert.deepEqual(await empty.commit({ createOnly: true }), { created: 0, replaced: 0 });
        const created = await store.plants.startImport();
        await created.add([{ id: 70, name: 'fresh' }]);
        assert.deepEqual(await created.commit({ createOnly: true }), { created: 1, replaced: 0 });
      } finally {
        await store.close();
      }
    });
  });
}
