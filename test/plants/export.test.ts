import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import { parseJson } from '@plant-store/client/json';
import type { Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import { assertError, testApp } from '../helpers.js';
import { LARGE_DATA } from '../tier.js';

const EDGES = [-(2n ** 63n), -(2n ** 53n) - 1n, -1, 0, 2n ** 53n + 1n, 2n ** 63n - 1n];

async function seed(store: Store, plants: StoredPlant[]): Promise<void> {
  const session = await store.plants.startImport();
  for (let i = 0; i < plants.length; i += 5000) await session.add(plants.slice(i, i + 5000));
  await session.commit({ createOnly: false });
}

function ndjson(text: string): StoredPlant[] {
  assert.ok(text === '' || text.endsWith('\n'), 'every line ends with a newline');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => parseJson(line) as StoredPlant);
}

describe('exports: every plant as NDJSON or CSV, from one snapshot', async () => {
  const t = await testApp(after);
  const tricky: StoredPlant[] = [
    { id: 10, name: 'comma, inside', tag: 'plain' },
    { id: 11, name: 'a "quoted" word', tag: '' },
    { id: 12, name: 'line\nbreak and\r\nCRLF' },
    { id: 13, name: '=SUM(A1:A9)', tag: '+danger' },
    { id: 14, name: '-minus', tag: '@at' },
    { id: 15, name: '\ttab first', tag: '\rcr first' },
    { id: 16, name: 'ünïcødé 🌿', tag: 'plain' },
    { id: 17, name: '=1,"2"' },
  ];
  await seed(t.store, [...EDGES.map((id) => ({ id, name: `edge ${id}`, tag: 'edge' })), ...tricky]);
  const all = [...EDGES.map((id) => ({ id, name: `edge ${id}`, tag: 'edge' })), ...tricky].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));

  it('NDJSON by Accept or by format=ndjson: every plant in id order, ids exact, limit and after ignored', async () => {
    for (const options of [{ headers: { accept: 'application/x-ndjson' } }, { url: '?format=ndjson&limit=2&after=0' }]) {
      const res = await t.call('GET', `/plants${options.url ?? ''}`, { headers: options.headers ?? {} });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      assert.deepEqual(ndjson(res.payload), all);
      assert.ok(res.payload.includes('{"id":9223372036854775807,"name":"edge 9223372036854775807","tag":"edge"}'));
      assert.ok(res.payload.includes('{"id":-9223372036854775808,'));
    }
  });

  it('the tag filter applies to exports', async () => {
    const res = await t.call('GET', '/plants?tag=edge', { headers: { accept: 'application/x-ndjson' } });
    assert.deepEqual(
      ndjson(res.payload).map((p) => p.id),
      EDGES,
    );
    const none = await t.call('GET', '/plants?tag=nothing&format=ndjson');
    assert.equal(none.payload, '');
  });

  it('CSV by Accept or format=csv: RFC 4180 with CRLF, a header, quoting, ids as plain integers, formulas disarmed', async () => {
    for (const options of [{ headers: { accept: 'text/csv' } }, { url: '?format=csv' }]) {
      const res = await t.call('GET', `/plants${options.url ?? ''}`, { headers: options.headers ?? {} });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      assert.equal(res.headers['content-disposition'], 'attachment; filename="plants.csv"');
      assert.ok(res.payload.startsWith('id,name,tag\r\n'));
      assert.ok(res.payload.endsWith('\r\n'));
      assert.ok(!/[^\r]\n/.test(res.payload.replace(/"[^"]*"/g, '')), 'records end with CRLF');
      const rows = parseCsv<Array<{ id: string; name: string; tag: string }>[number]>(res.payload, { columns: true, relax_column_count: false });
      assert.deepEqual(
        rows.map((r) => r.id),
        all.map((p) => String(p.id)),
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      assert.deepEqual(byId.get('10'), { id: '10', name: 'comma, inside', tag: 'plain' });
      assert.deepEqual(byId.get('11'), { id: '11', name: 'a "quoted" word', tag: '' });
      assert.deepEqual(byId.get('12'), { id: '12', name: 'line\nbreak and\r\nCRLF', tag: '' });
      assert.deepEqual(byId.get('13'), { id: '13', name: "'=SUM(A1:A9)", tag: "'+danger" });
      assert.deepEqual(byId.get('14'), { id: '14', name: "'-minus", tag: "'@at" });
      assert.deepEqual(byId.get('15'), { id: '15', name: "'\ttab first", tag: "'\rcr first" });
      assert.deepEqual(byId.get('16'), { id: '16', name: 'ünïcødé 🌿', tag: 'plain' });
      assert.deepEqual(byId.get('17'), { id: '17', name: '\'=1,"2"', tag: '' });
      assert.deepEqual(byId.get('-9223372036854775808'), { id: '-9223372036854775808', name: 'edge -9223372036854775808', tag: 'edge' });
      assert.ok(res.payload.includes('\r\n-1,edge -1,edge\r\n'), 'a negative id is a plain integer, not disarmed');
    }
  });

  it('negotiates by Accept and its q-values; JSON (a page) when nothing else is asked for or acceptable', async () => {
    const type = async (accept: string) => String((await t.call('GET', '/plants?limit=1', { headers: { accept } })).headers['content-type']);
    assert.match(await type('application/json'), /^application\/json/);
    assert.match(await type('*/*'), /^application\/json/);
    assert.match(await type('text/html'), /^application\/json/);
    assert.match(await type('text/*'), /^text\/csv/);
    assert.match(await type('text/csv;q=0.5, application/x-ndjson'), /^application\/x-ndjson/);
    assert.match(await type('application/json;q=0.1, text/csv'), /^text\/csv/);
    assert.match(
      String((await t.call('GET', '/plants?format=json', { headers: { accept: 'text/csv' } })).headers['content-type']),
      /^application\/json/,
    );
    assertError(await t.call('GET', '/plants?format=xml'), 400, 'querystring.format');
  });

  it('Prefer: count=exact adds X-Total-Count (the tag filter applies) and Preference-Applied; without it nothing is counted', async () => {
    const counted = await t.call('GET', '/plants?limit=2', { headers: { prefer: 'count=exact' } });
    assert.equal(counted.headers['x-total-count'], String(all.length));
    assert.equal(counted.headers['preference-applied'], 'count=exact');
    assert.equal(counted.json().length, 2);
    const tagged = await t.call('GET', '/plants?tag=plain', { headers: { prefer: 'return=minimal, count=exact' } });
    assert.equal(tagged.headers['x-total-count'], '2');
    const plain = await t.call('GET', '/plants?limit=2');
    assert.equal(plain.headers['x-total-count'], undefined);
    assert.equal(plain.headers['preference-applied'], undefined);
    const exported = await t.call('GET', '/plants?format=csv&tag=edge', { headers: { prefer: 'count=exact' } });
    assert.equal(exported.headers['x-total-count'], String(EDGES.length));
    assert.equal(exported.headers['preference-applied'], 'count=exact');
  });

  it('needs plants:read', async () => {
    const writer = await t.tokenWith('plants:write');
    assertError(await t.call('GET', '/plants?format=ndjson', { token: writer }), 403);
    assertError(await t.call('GET', '/plants?format=csv', { token: null }), 401);
  });

  it('exports 100,000 plants, ids exact at the int64 edges, parsed back by a CSV parser', LARGE_DATA, async () => {
    const big = await testApp(after);
    const plants: StoredPlant[] = [];
    for (let i = 0; i < 100_000; i++)
      plants.push({ id: 2n ** 63n - 1n - BigInt(i * 7919), name: `bulk ${i}`, ...(i % 2 ? { tag: `t${i % 10}` } : {}) });
    plants.push({ id: -(2n ** 63n), name: 'min' });
    await seed(big.store, plants);
    const csv = await big.call('GET', '/plants?format=csv');
    const rows = parseCsv<Array<{ id: string; name: string; tag: string }>[number]>(csv.payload, { columns: true });
    assert.equal(rows.length, 100_001);
    const sorted = [...plants].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    for (let i = 0; i < rows.length; i++) {
      assert.equal(rows[i]!.id, String(sorted[i]!.id));
      assert.equal(rows[i]!.name, sorted[i]!.name);
    }
    const lines = ndjson((await big.call('GET', '/plants', { headers: { accept: 'application/x-ndjson' } })).payload);
    assert.equal(lines.length, 100_001);
    assert.equal(lines.at(-1)!.id, 2n ** 63n - 1n);
    assert.equal(lines[0]!.id, -(2n ** 63n));
  });
});
