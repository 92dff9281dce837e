import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { MIGRATION_TABLE } from '../../src/store/migration.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';

/**
 * One table of the schema changes and the version each has on each store (src/store/migration.ts): the
 * stores' lists follow it, and docs/development.md shows it as it is.
 */
describe('the migrations, one table for both stores', () => {
  it("each store's migrations are the table's, in its order, at its versions", () => {
    for (const [kind, migrations] of [
      ['sqlite', SQLITE_MIGRATIONS],
      ['postgres', POSTGRES_MIGRATIONS],
    ] as const) {
      const table = MIGRATION_TABLE.filter((row) => row[kind] !== undefined).map((row) => [row[kind], row.name]);
      assert.deepEqual(
        migrations.map((m) => [m.version, m.name]),
        table,
        kind,
      );
    }
  });

  it('names each change once, in the order it was made on both stores', () => {
    assert.equal(new Set(MIGRATION_TABLE.map((row) => row.name)).size, MIGRATION_TABLE.length);
    for (const kind of ['sqlite', 'postgres'] as const) {
      const versions = MIGRATION_TABLE.flatMap((row) => (row[kind] === undefined ? [] : [row[kind]]));
      assert.deepEqual(
        versions,
        [...versions].sort((a, b) => a - b),
        `${kind}: versions rise down the table`,
      );
    }
  });

  it('docs/development.md shows the table', () => {
    const page = readFileSync(fileURLToPath(new URL('../../../docs/development.md', import.meta.url)), 'utf8');
    for (const row of MIGRATION_TABLE) {
      const line = `| \`${row.name}\` | ${row.sqlite ?? '–'} | ${row.postgres ?? '–'} | ${row.does} |`;
      assert.ok(page.includes(line), `docs/development.md lacks the row: ${line}`);
    }
  });
});
