import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from './helpers.js';
import { baseEnv, CLI_JS, startServer } from './process.js';

/**
 * The README's quick start, pasted in order: every block marked `<!-- quick start` runs in one bash, as a
 * reader would paste it, against a fresh server, with the first-start token. Each `# …` line right under
 * a command is what it must print (`…` stands for anything). The substitutions are the reader's own: the
 * server's address, the token it printed, and `npx plant-store` as this checkout's CLI. The server is
 * started once, with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, as the webhooks quick start restarts it.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

interface Step {
  command: string;
  expected: string[];
}

/** The quick-start blocks' commands, each with the output lines it must print. */
function quickStart(): Step[] {
  const steps: Step[] = [];
  for (const match of README.matchAll(/^<!-- quick start[^\n]*-->\n```sh\n([\s\S]*?)\n```$/gm)) {
    let current: Step | undefined;
    let continued = false;
    for (const line of match[1]!.split('\n')) {
      if (continued) {
        current!.command += `\n${line}`;
      } else if (line.startsWith('# ')) {
        assert.ok(current, `an expected output before any command: ${line}`);
        current.expected.push(line.slice(2));
      } else if (line.trim() !== '') {
        current = { command: line, expected: [] };
        steps.push(current);
      }
      continued = /\\$/.test(line);
    }
  }
  return steps;
}

/** A line as a pattern: `…` stands for anything. */
function pattern(line: string): RegExp {
  return new RegExp(
    `^${line
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

const curl = existsSync('/usr/bin/curl') || existsSync('/usr/local/bin/curl');
const skip = curl ? false : 'curl is missing (.ci/run installs it)';
if (skip) process.stderr.write(`\n*** SKIPPING the README test: ${skip} ***\n\n`);

describe('the README', () => {
  test('its quick start works when pasted in order on a fresh store', { skip, timeout: 300_000 }, async () => {
    const steps = quickStart();
    assert.ok(steps.length >= 25, `${steps.length} commands`);
    const dir = tempDir(after);
    const databaseUrl = `file:${join(dir, 'data', 'plant-store.db')}`;
    const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const token = /^ {4}(ps_\S+)$/m.exec(server.stderr)?.[1];
    assert.ok(token, server.stderr);

    const out = join(dir, 'out');
    const script = ['set -u', `mkdir -p '${out}'`];
    steps.forEach((step, i) => {
      const command = step.command
        .replaceAll('http://127.0.0.1:8080', server.url)
        .replaceAll('npx plant-store', `node '${CLI_JS}'`)
        .replace(/^TOKEN=ps_\.\.\./, `TOKEN=${token}`);
      script.push(`{ ${command}\n} >'${out}/${i}.out' 2>'${out}/${i}.err'; echo $? >'${out}/${i}.rc'`);
    });
    writeFileSync(join(dir, 'quick-start.sh'), script.join('\n'));
    // The reader's terminal: in the folder, with the server's store (the default DATABASE_URL there).
    await promisify(execFile)('bash', ['quick-start.sh'], { cwd: dir, env: baseEnv({ DATABASE_URL: databaseUrl }), timeout: 240_000 });

    steps.forEach((step, i) => {
      const read = (kind: string) => readFileSync(join(out, `${i}.${kind}`), 'utf8');
      const where = `README command ${i + 1}: ${step.command}`;
      assert.equal(read('rc').trim(), '0', `${where}\nstderr: ${read('err')}`);
      const lines = read('out')
        .split('\n')
        .map((line) => line.replace(/\r$/, '').trim());
      let at = 0;
      for (const expected of step.expected) {
        const found = lines.findIndex((line, index) => index >= at && pattern(expected).test(line));
        assert.ok(found >= 0, `${where}\nexpected the line: ${expected}\nit printed:\n${read('out')}\nstderr: ${read('err')}`);
        at = found + 1;
      }
    });
  });

  test('its links to files in the repository lead to files that exist (the specification is shipped in docs/spec/)', () => {
    const links = [...README.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/.test(href));
    assert.ok(links.includes('docs/spec/plant-store-spec.md'), links.join(', '));
    for (const href of links) {
      const path = resolve(ROOT, href);
      assert.ok(path.startsWith(ROOT), `${href} points outside the repository`);
      assert.ok(existsSync(path), `${href} does not exist`);
    }
    assert.equal(dirname(resolve(ROOT, 'docs/spec/plant-store-spec.md')), join(ROOT, 'docs', 'spec'));
    assert.match(readFileSync(join(ROOT, 'docs/spec/plant-store-spec.md'), 'utf8'), /^# Plant Store Service Specification/);
  });
});
