import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from './helpers.js';
import { baseEnv, CLI_JS, firstToken, startServer } from './process.js';
import { needs } from './toolkit.js';

/**
 * The quick start, pasted in order: every block marked `<!-- quick start` in the README, then in the docs
 * pages that go on from it (PAGES, in that order), runs in one bash, as a reader would paste it, against a
 * fresh server, with the first-start token. Each `# …` line right under a command is what it must print
 * (`…` stands for anything). The substitutions are the reader's own: the server's address, the token it
 * printed, and `npx plant-store` as this checkout's CLI. The server is started once, with
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, as the webhooks page restarts it. Every link of the README and the
 * pages leads to a file (and a heading) that exists, and no page names the project's internal work items.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The files whose quick-start blocks run, in this order: each page goes on from the ones before it. */
const PAGES = ['README.md', 'docs/api.md', 'docs/import-export.md', 'docs/webhooks.md'];
/** Every user document: the README and the guide's pages (not docs/spec/, the specification as given). */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const textOf = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const QUICK_START = /^<!-- quick start[^\n]*-->\n```sh\n([\s\S]*?)\n```$/gm;

interface Step {
  command: string;
  expected: string[];
}

/** The quick-start blocks' commands, each with the output lines it must print. */
function quickStart(): Step[] {
  const steps: Step[] = [];
  for (const match of PAGES.flatMap((page) => [...textOf(page).matchAll(QUICK_START)])) {
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

/** The anchors of a Markdown file's headings, as GitHub makes them (lower case, punctuation dropped, spaces to -). */
function headings(path: string): string[] {
  if (!path.endsWith('.md')) return [];
  const text = readFileSync(path, 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
    m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
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
const skip = needs('the README test', curl ? false : 'curl is missing (.ci/run installs it)');

describe('the README', () => {
  test('its quick start works when pasted in order on a fresh store', { skip, timeout: 300_000 }, async () => {
    const steps = quickStart();
    assert.ok(steps.length >= 25, `${steps.length} commands`);
    const dir = tempDir(after);
    const databaseUrl = `file:${join(dir, 'data', 'plant-store.db')}`;
    const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const token = await firstToken(() => server.stderr);

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
      const where = `quick-start command ${i + 1}: ${step.command}`;
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

  test('runs the quick-start blocks of every page that has some', () => {
    for (const document of DOCUMENTS)
      if ([...textOf(document).matchAll(QUICK_START)].length > 0)
        assert.ok(PAGES.includes(document), `${document} has a quick-start block that PAGES leaves out`);
  });

  test("its links and the pages' lead to files and headings that exist (the specification is shipped in docs/spec/)", () => {
    assert.ok(textOf('README.md').includes('](docs/spec/plant-store-spec.md)'));
    for (const document of DOCUMENTS) {
      const links = [...textOf(document).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/.test(href));
      for (const href of links) {
        const [file, anchor] = href.split('#') as [string, string | undefined];
        const path = file === '' ? join(ROOT, document) : resolve(dirname(join(ROOT, document)), file);
        assert.ok(path.startsWith(ROOT), `${document}: ${href} points outside the repository`);
        assert.ok(existsSync(path), `${document}: ${href} does not exist`);
        if (anchor !== undefined) assert.ok(headings(path).includes(anchor), `${document}: ${href}: no such heading in ${file || document}`);
      }
    }
    assert.match(textOf('docs/spec/plant-store-spec.md'), /^# Plant Store Service Specification/);
  });

  test('its first block gives the fast tier of the tests beside the whole suite, each with its time', () => {
    const first = /^```sh\n([\s\S]*?)\n```$/m.exec(textOf('README.md'))![1]!;
    const lines = first.split('\n');
    const unit = lines.findIndex((line) => /^npm run test:unit +# .*: \d+–\d+ min$/.test(line));
    const all = lines.findIndex((line) => /^npm test +# every test\b.*: \d+–\d+ min$/.test(line));
    assert.ok(unit >= 0 && all >= 0, first);
    assert.ok(unit < all, 'the fast tier comes first');
  });

  test("the README is a short guide, and no user document names the project's internal work items", () => {
    assert.ok(textOf('README.md').split('\n').length <= 400, 'README.md: at most 400 lines');
    const internal = /\b(?:issue|item|round)\s+#?\d+|\b(?:first|second|third|fourth|fifth|sixth)\s+round\b|\bthe lead\b/i;
    for (const document of DOCUMENTS) {
      const found = internal.exec(textOf(document));
      assert.equal(found, null, `${document} names an internal work item: "${found?.[0]}"`);
    }
  });
});
