import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { assertFails, CLI_JS, request, run, startServer, withoutProgress, type Ran } from '../process.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { needs } from '../toolkit.js';

/**
 * `plants import` refuses a row with a field a plant does not have, naming its line, and stores nothing;
 * `--lenient` ignores such fields and says each once on stderr, with the rows it was in, in the words of
 * the service's Warning headers. The same on the store (SQLite, PostgreSQL) and through a service (--url).
 */

const TOKEN = 'cli-import-unknown-token-0123456789abcdef';

/** Rows with a misspelt tag (in 3 rows) and a field no plant has (in 1). */
const TYPOS =
  '{"id":1,"name":"Fern","tga":"shade"}\n{"id":2,"name":"Ivy"}\n{"id":3,"name":"Moss","tga":"damp","colour":"green"}\n{"id":4,"name":"Aloe","tga":"sun"}\n';
const WARNINGS =
  'plant-store: warning: unknown field "tga" was ignored in 3 rows: did you mean "tag"?\nplant-store: warning: unknown field "colour" was ignored in 1 row\n';

/**
 * The rules, through `importing` (plants import with its options and input) and `stored` (the plants kept, as
 * NDJSON); `into` is how the import's last line names where it went.
 */
async function unknownFieldsByTheRules(
  importingAsIs: (args: string[], input: string) => Promise<Ran>,
  stored: () => Promise<string>,
  into: string,
): Promise<void> {
  const importing = async (args: string[], input: string) => withoutProgress(await importingAsIs(args, input));
  // Strict, the default: the first row with an unknown field stops the import, naming its line (or element) and the fields.
  assertFails(await importing([], TYPOS), 'nothing imported: line 1: the row has an unknown field "tga": did you mean "tag"?');
  assertFails(
    await importing([], '{"id":2,"name":"Ivy"}\n\n{"id":3,"name":"Moss","tga":"damp","colour":"green"}\n'),
    'nothing imported: line 3: the row has unknown fields "tga" (did you mean "tag"?) and "colour"',
  );
  assertFails(
    await importing(['--mode', 'create-only'], '[{"id":2,"name":"Ivy"},{"id":3,"name":"Moss","tga":"damp"}]'),
    'nothing imported: element 1: the row has an unknown field "tga": did you mean "tag"?',
  );
  assert.equal(await stored(), '', 'nothing stored');

  // --lenient: stored without them, each said once with the rows it was in, before the counts.
  const lenient = await importing(['--lenient'], TYPOS);
  assert.equal(lenient.code, 0, lenient.stderr);
  assert.deepEqual(JSON.parse(lenient.stdout), { created: 4, replaced: 0 });
  assert.equal(lenient.stderr, `${WARNINGS}imported 4 plants from ndjson into ${into}: 4 created, 0 replaced\n`);
  assert.equal(
    await stored(),
    '{"id":1,"name":"Fern"}\n{"id":2,"name":"Ivy"}\n{"id":3,"name":"Moss"}\n{"id":4,"name":"Aloe"}\n',
    'the fields ignored, the plants stored',
  );
  const array = await importing(['--lenient', '--format', 'json'], '[{"id":5,"name":"Palm","tga":"x"}]');
  assert.equal(array.code, 0, array.stderr);
  assert.match(
    array.stderr,
    /^plant-store: warning: unknown field "tga" was ignored in 1 row: did you mean "tag"\?\nimported 1 plant from json into /,
  );
  // A field's name past ASCII (which a Warning header spells \u00e9) is said as it is, both ways.
  const accented = await importing(['--lenient'], '{"id":7,"name":"Rose","tagé":"red","\\\\u":1,"🌱":2}\n');
  assert.equal(accented.code, 0, accented.stderr);
  assert.match(
    accented.stderr,
    /^plant-store: warning: unknown field "tagé" was ignored in 1 row: did you mean "tag"\?\nplant-store: warning: unknown field "\\\\u" was ignored in 1 row\nplant-store: warning: unknown field "🌱" was ignored in 1 row\nimported 1 plant/,
  );
  // Nothing unknown: nothing said, strict or not.
  const plain = await importing([], '{"id":6,"name":"Cactus","tag":"dry"}\n');
  assert.equal(plain.stderr, `imported 1 plant from ndjson into ${into}: 1 created, 0 replaced\n`);
  const plainLenient = await importing(['--lenient'], '{"id":6,"name":"Cactus","tag":"dry"}\n');
  assert.equal(plainLenient.stderr, `imported 1 plant from ndjson into ${into}: 0 created, 1 replaced\n`);
  // A CSV's header names its columns: one a plant does not have is refused either way.
  for (const args of [[], ['--lenient']]) {
    const csv = await importing(args, 'id,name,tga\r\n7,Rose,red\r\n');
    assert.equal(csv.code, 1, csv.stderr);
    assert.match(csv.stderr, /^plant-store: nothing imported: line 1: the header must name the columns id, name and tag/);
  }
}

describe('plants import: unknown fields refused, or ignored and said with --lenient', () => {
  test('on a SQLite store', async () => {
    const dir = tempDir(after);
    const env = { DATABASE_URL: `file:${join(dir, 'p.db')}` };
    assert.equal((await run([CLI_JS, 'migrate'], { env })).code, 0);
    await unknownFieldsByTheRules(
      (args, input) => run([CLI_JS, 'plants', 'import', '-', ...args], { env, input }),
      async () => (await run([CLI_JS, 'plants', 'export'], { env })).stdout,
      join(dir, 'p.db'),
    );
  });

  test(
    'on a PostgreSQL store',
    { skip: needs('the import of unknown fields on PostgreSQL', postgresUnavailableReason()), timeout: 120_000 },
    async () => {
      const postgres = await TestPostgres.start(after);
      const env = { DATABASE_URL: await postgres.createDatabase() };
      assert.equal((await run([CLI_JS, 'migrate'], { env })).code, 0);
      await unknownFieldsByTheRules(
        (args, input) => run([CLI_JS, 'plants', 'import', '-', ...args], { env, input }),
        async () => (await run([CLI_JS, 'plants', 'export'], { env })).stdout,
        env.DATABASE_URL,
      );
    },
  );

  test('through a service (--url), which refuses by default (UNKNOWN_FIELDS=refuse): --lenient sends Prefer: handling=lenient', async () => {
    const dir = tempDir(after);
    const server = await startServer(after, {
      env: { DATABASE_URL: `file:${join(dir, 'server.db')}`, PLANT_STORE_TOKENS: TOKEN, UNKNOWN_FIELDS: 'refuse' },
    });
    const away = tempDir(after);
    await unknownFieldsByTheRules(
      (args, input) => run([CLI_JS, 'plants', 'import', '-', ...args, '--url', server.url], { cwd: away, env: { PLANT_STORE_TOKEN: TOKEN }, input }),
      async () => (await request(`${server.url}/plants?format=ndjson`, { token: TOKEN })).text,
      server.url,
    );
  });

  test('through a service that ignores by default (UNKNOWN_FIELDS=ignore): the CLI still sends what is strict', async () => {
    const dir = tempDir(after);
    const server = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'server.db')}`, PLANT_STORE_TOKENS: TOKEN } });
    const away = tempDir(after);
    await unknownFieldsByTheRules(
      (args, input) => run([CLI_JS, 'plants', 'import', '-', ...args, '--url', server.url], { cwd: away, env: { PLANT_STORE_TOKEN: TOKEN }, input }),
      async () => (await request(`${server.url}/plants?format=ndjson`, { token: TOKEN })).text,
      server.url,
    );
  });
});
