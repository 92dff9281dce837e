import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import { tempDir } from '../helpers.js';
import { cli, CLI_JS, request, run, startServer } from '../process.js';

/** `plant-store plants …` against the database of a running server, through the same code as HTTP. */

const TOKEN = 'cli-plants-token-0123456789abcdefg';

describe('plants import and export from the CLI', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'p.db')}`;
  const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN } });

  test('import FILE (NDJSON or a JSON array, by its extension or --format) prints the counts; the running server sees the plants', async () => {
    const ndjson = join(dir, 'plants.ndjson');
    writeFileSync(ndjson, '{"id":1,"name":"Fern","tag":"green"}\n{"id":9223372036854775807,"name":"Max"}\n');
    const imported = await cli(databaseUrl, 'plants', 'import', ndjson);
    assert.equal(imported.code, 0, imported.stderr);
    assert.deepEqual(JSON.parse(imported.stdout), { created: 2, replaced: 0 });
    const json = join(dir, 'more.json');
    writeFileSync(json, '[{"id":1,"name":"Fern II"},{"id":2,"name":"Moss"}]');
    assert.deepEqual(JSON.parse((await cli(databaseUrl, 'plants', 'import', json)).stdout), { created: 1, replaced: 1 });
    const res = await request(`${server.url}/plants/9223372036854775807`, { token: TOKEN });
    assert.equal(res.text, '{"id":9223372036854775807,"name":"Max"}');
    assert.equal((await request(`${server.url}/plants/1`, { token: TOKEN })).text, '{"id":1,"name":"Fern II"}');
  });

  test('import - reads standard input; a bad line fails with exit 1 naming it, nothing stored; create-only refuses existing ids', async () => {
    const piped = await run([CLI_JS, 'plants', 'import', '-'], { env: { DATABASE_URL: databaseUrl }, input: '{"id":50,"name":"piped"}\n' });
    assert.equal(piped.code, 0, piped.stderr);
    assert.deepEqual(JSON.parse(piped.stdout), { created: 1, replaced: 0 });
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(bad, '{"id":60,"name":"ok"}\n{"id":61,"name":""}\n');
    const refused = await cli(databaseUrl, 'plants', 'import', bad);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /nothing imported: line 2: name/);
    assert.equal((await request(`${server.url}/plants/60`, { token: TOKEN })).status, 404);
    const again = join(dir, 'again.ndjson');
    writeFileSync(again, '{"id":50,"name":"again"}\n');
    const conflict = await cli(databaseUrl, 'plants', 'import', again, '--mode', 'create-only');
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /id 50 exists already/);
    for (const args of [
      ['import'],
      ['import', again, '--format', 'xml'],
      ['import', again, '--mode', 'merge'],
      ['export', '--format', 'json'],
      ['nope'],
    ]) {
      const result = await cli(databaseUrl, 'plants', ...args);
      assert.equal(result.code, 1, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    }
  });

  test('export writes NDJSON (default) or CSV to stdout, every plant in id order, the tag filter applied', async () => {
    const ndjson = await cli(databaseUrl, 'plants', 'export');
    assert.equal(ndjson.code, 0, ndjson.stderr);
    const lines = ndjson.stdout.trim().split('\n');
    assert.equal(lines.at(-1), '{"id":9223372036854775807,"name":"Max"}');
    assert.deepEqual(
      lines.map((l) => /"id":(\d+)/.exec(l)![1]),
      ['1', '2', '50', '9223372036854775807'],
    );
    const csv = await cli(databaseUrl, 'plants', 'export', '--format', 'csv');
    const rows = parseCsv<Array<{ id: string }>[number]>(csv.stdout, { columns: true });
    assert.deepEqual(
      rows.map((r) => r.id),
      ['1', '2', '50', '9223372036854775807'],
    );
    const tagged = await cli(databaseUrl, 'plants', 'export', '--tag', 'green');
    assert.equal(tagged.stdout, '', 'the only green plant was replaced without a tag');
    // A value that starts with a dash is a value: the descending orders.
    const descending = await cli(databaseUrl, 'plants', 'export', '--sort', '-id');
    assert.equal(descending.code, 0, descending.stderr);
    assert.deepEqual(
      descending.stdout
        .trim()
        .split('\n')
        .map((l) => /"id":(\d+)/.exec(l)![1]),
      ['9223372036854775807', '50', '2', '1'],
    );
  });

  test('create, get, list and delete on the store: the rules of POST /plants, every plant listed unless --limit, a table on request', async () => {
    const created = await cli(databaseUrl, 'plants', 'create', '--id', '300', '--name', 'Zebra plant', '--tag', 'green');
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, '{\n  "id": 300,\n  "name": "Zebra plant",\n  "tag": "green"\n}\n');
    assert.equal(
      (await request(`${server.url}/plants/300`, { token: TOKEN })).text,
      '{"id":300,"name":"Zebra plant","tag":"green"}',
      'the server sees it',
    );
    for (const [args, message] of [
      [['--id', '301', '--name', ''], 'plant-store: nothing stored: name must not be empty\n'],
      [['--id', '301', '--name', 'x', '--tag', 't'.repeat(65)], 'plant-store: nothing stored: tag must be at most 64 characters long\n'],
      [
        ['--id', '9223372036854775808', '--name', 'x'],
        /--id must be an integer from -9223372036854775808 to 9223372036854775807, got "9223372036854775808"/,
      ],
      [['--id', '1.5', '--name', 'x'], /--id must be an integer/],
      [['--name', 'x'], /--id ID is required/],
    ] as Array<[string[], string | RegExp]>) {
      const refused = await cli(databaseUrl, 'plants', 'create', ...args);
      assert.equal(refused.code, 1, args.join(' '));
      if (typeof message === 'string') assert.equal(refused.stderr, message);
      else assert.match(refused.stderr, message);
    }
    assert.equal((await request(`${server.url}/plants/301`, { token: TOKEN })).status, 404, 'nothing stored');

    // Every plant, in the order asked for, as an export's lines; --limit caps them; the filters are the export's.
    const all = await cli(databaseUrl, 'plants', 'list');
    assert.equal(all.stdout, (await cli(databaseUrl, 'plants', 'export')).stdout);
    const byName = await cli(databaseUrl, 'plants', 'list', '--sort', '-name', '--limit', '2');
    assert.equal(byName.stdout, '{"id":50,"name":"piped"}\n{"id":300,"name":"Zebra plant","tag":"green"}\n');
    const tagged = await cli(databaseUrl, 'plants', 'list', '--tag', 'green', '--q', 'ZEBRA', '--format', 'table');
    assert.equal(tagged.stdout, 'ID   NAME         TAG\n300  Zebra plant  green\n');
    assert.match((await cli(databaseUrl, 'plants', 'list', '--limit', 'all')).stderr, /--limit must be a whole number, 1 or more, got "all"/);

    const got = await cli(databaseUrl, 'plants', 'get', '9223372036854775807');
    assert.equal(got.stdout, '{\n  "id": 9223372036854775807,\n  "name": "Max"\n}\n');
    assert.match((await cli(databaseUrl, 'plants', 'get', 'x')).stderr, /ID must be an integer/);
    const deleted = await cli(databaseUrl, 'plants', 'delete', '300');
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, '');
    assert.equal((await request(`${server.url}/plants/300`, { token: TOKEN })).status, 404, 'the server sees it gone');
    const again = await cli(databaseUrl, 'plants', 'delete', '300');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^plant-store: no plant with id 300 in /);
  });
});
