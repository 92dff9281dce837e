import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '../helpers.js';
import { baseEnv, CLI_JS, request, startServer } from '../process.js';

/**
 * docs/backups.md's SQLite commands, pasted as a reader would: its first `sh` block, each command run in
 * bash with the reader's own substitutions only (the store's and the backups' folders, `npx plant-store`
 * as this checkout's CLI), the backup while the server takes writes, the restore once it is stopped, as
 * the block's comments say, then the server started again. Each `# …` line under a command is what it
 * prints (numbers stand for any number, the block's time stamp for any; a `#   ` line goes on the one above).
 */

const DOC = fileURLToPath(new URL('../../../docs/backups.md', import.meta.url));
const TOKEN = 'backups-docs-token-0123456789abcdefg';

interface Step {
  command: string;
  expected: string;
}

/** The commands of the first `sh` block under "## SQLite", each with the line it must print. */
function sqliteBlock(): Step[] {
  const section = readFileSync(DOC, 'utf8')
    .split(/^## /m)
    .find((part) => part.startsWith('SQLite\n'))!;
  const block = /^```sh\n([\s\S]*?)\n```$/m.exec(section)![1]!;
  const steps: Step[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('#   ')) steps.at(-1)!.expected += ` ${line.slice(4)}`;
    else if (line.startsWith('# ')) steps.at(-1)!.expected = line.slice(2);
    else if (line.trim() !== '') steps.push({ command: line, expected: '' });
  }
  return steps;
}

/** A documented output line as a pattern, once the reader's paths are in it. */
function pattern(line: string): RegExp {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/(?<![\w-])\d+(?:\\\.\d+)?(?![\w-])/g, '\\d+(?:\\.\\d+)?').replace(/\d{8}T\d{6}Z/g, '\\d{8}T\\d{6}Z')}\n$`);
}

test("docs/backups.md's backup and restore, pasted: backup while the server writes, restore once it is stopped, then start it", async () => {
  const steps = sqliteBlock();
  assert.deepEqual(
    steps.map((step) => step.command.split(' ').slice(0, 3).join(' ')),
    ['npx plant-store backup', 'npx plant-store restore'],
  );
  const dir = tempDir(after);
  // The reader's folders: the store's (docs/production.md's is /srv/plant-store/data) and the backups'.
  const [storeDir, backups] = [join(dir, 'srv', 'data'), join(dir, 'backups')];
  mkdirSync(backups);
  const store = join(storeDir, 'plant-store.db');
  const databaseUrl = `file:${store}`;
  const ours = (text: string) => text.replaceAll('/srv/data/', `${storeDir}/`).replaceAll('/backups/', `${backups}/`);
  const paste = async (step: Step) => {
    const command = ours(step.command).replaceAll('npx plant-store', `node '${CLI_JS}'`);
    const ran = await promisify(execFile)('bash', ['-c', command], { cwd: dir, env: baseEnv({ DATABASE_URL: databaseUrl }) });
    assert.equal(ran.stdout, '', step.command);
    assert.match(ran.stderr, pattern(ours(step.expected)), step.command);
  };

  let server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN } });
  const put = (url: string, id: number, name: string) =>
    request(`${url}/plants/${id}`, { method: 'PUT', token: TOKEN, body: JSON.stringify({ name }) });
  for (let id = 1; id <= 20; id++) assert.equal((await put(server.url, id, `plant ${id}`)).status, 201);
  await paste(steps[0]!);
  assert.equal((await put(server.url, 21, 'after the backup')).status, 201);
  assert.equal((await server.stop()).code, 0);
  await paste(steps[1]!);

  server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN } });
  assert.equal((await request(`${server.url}/plants/20`, { token: TOKEN })).text, '{"id":20,"name":"plant 20"}');
  assert.equal((await request(`${server.url}/plants/21`, { token: TOKEN })).status, 404, 'written after the backup');
  assert.equal((await put(server.url, 22, 'after the restore')).status, 201);
});
