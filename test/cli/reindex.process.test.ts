import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import { tempDir } from '../helpers.js';
import { cli, request, startServer } from '../process.js';

/** `plant-store reindex`: the search index made anew from the plants, while the server runs. */

const TOKEN = 'cli-reindex-token-0123456789abcdefg';

test('reindex rebuilds an index found wrong, with the server running, and says how many plants it holds', async () => {
  const dir = tempDir(after);
  const path = join(dir, 'p.db');
  const databaseUrl = `file:${path}`;
  const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN } });
  const file = join(dir, 'plants.ndjson');
  writeFileSync(file, Array.from({ length: 30 }, (_, i) => `{"id":${i + 1},"name":"Rubber plant ${i + 1}"}\n`).join(''));
  assert.equal((await cli(databaseUrl, 'plants', 'import', file)).code, 0);
  const found = async () => (JSON.parse((await request(`${server.url}/plants?q=RUBBER&limit=100`, { token: TOKEN })).text) as unknown[]).length;
  assert.equal(await found(), 30);

  // An index emptied behind the service's back (its mark unchanged) finds nothing…
  const db = openConnection(path);
  prepare(db, "INSERT INTO plants_search (plants_search) VALUES ('delete-all')").run();
  db.close();
  assert.equal(await found(), 0);
  // …until it is made anew.
  const rebuilt = await cli(databaseUrl, 'reindex');
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  assert.equal(rebuilt.stdout, '');
  assert.equal(rebuilt.stderr, `the search index of ${path} holds every plant (30 plants)\n`, 'and says which store it rebuilt');
  assert.equal(await found(), 30);
});

test('reindex refuses a store that does not exist, naming it, in one line', async () => {
  const missing = join(tempDir(after), 'none.db');
  const result = await cli(`file:${missing}`, 'reindex');
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^plant-store: no store at .*none\.db/);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
});
