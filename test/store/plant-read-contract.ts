import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PageKey, Store } from '../../src/store/store.js';
import { listPlants } from '../helpers.js';

/** The plant reads every store must answer alike: pages, reads of many, counts, exports and imports (run by storeContract). */
export function plantReadContract(name: string, open: () => Promise<Store>): void {
  describe(`store contract, plant reads: ${name}`, () => {
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
