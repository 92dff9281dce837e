import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The client's types as a consumer sees them: test/client/fixtures/consumer.ts imports `@plant-store/client`
 * through the package's exports (the built declarations in packages/client/dist/, as `npm run build` makes
 * them) and is compiled with a consumer's tsconfig. Every mistake it makes is marked `@ts-expect-error`, so tsc accepts
 * the file only if each marked line is an error; and with the markers stripped, tsc must report errors on
 * exactly those lines, so no marker can hide behind another error or pass by being unused elsewhere.
 */

const run = promisify(execFile);
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const FIXTURES = fileURLToPath(new URL('../../../test/client/fixtures', import.meta.url));
const DIRECTIVE = /^\s*\/\/ @ts-expect-error\b/;

/** Runs tsc on a project; its exit code and the lines (1-based) of the file it reports errors on. */
async function tsc(project: string): Promise<{ code: number; output: string; errorLines: number[] }> {
  const { code, stdout } = await run(process.execPath, [TSC, '--pretty', 'false', '-p', project]).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  const errorLines = [...stdout.matchAll(/^\S*consumer\.ts\((\d+),\d+\): error TS\d+/gm)].map((match) => Number(match[1]));
  return { code, output: stdout, errorLines: [...new Set(errorLines)] };
}

describe('the client types, as a consumer compiles them', { concurrency: true }, () => {
  const source = readFileSync(join(FIXTURES, 'consumer.ts'), 'utf8');
  const lines = source.split('\n');
  const marked = lines.flatMap((line, i) => (DIRECTIVE.test(line) ? [i + 2] : []));

  it("holds the READMEs' client example (the service's and the package's), line for line, so that it compiles too", () => {
    const fixtureLines = new Set(lines.map((line) => line.trim()));
    for (const [path, section] of [
      ['../../../docs/client.md', /```ts\n([\s\S]*?)\n```/],
      ['../../../packages/client/README.md', /```ts\n([\s\S]*?)\n```/],
    ] as const) {
      const example = section.exec(readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8'));
      assert.ok(example, `${path} has a ts example`);
      for (const line of example[1]!.split('\n')) assert.ok(fixtureLines.has(line.trim()), `consumer.ts lacks the line of ${path}: ${line}`);
    }
  });

  it("compiles with the package README's TypeScript settings, and needs a target with bigint literals and resolution by exports", async () => {
    const readme = readFileSync(fileURLToPath(new URL('../../../packages/client/README.md', import.meta.url)), 'utf8');
    const settings = /\*\*TypeScript settings\*\*[\s\S]*?```json\n([\s\S]*?)\n\s*```/.exec(readme);
    assert.ok(settings, 'the client README has its TypeScript settings');
    assert.match(readme, /needs `"type": "module"` in its\s+package\.json/);
    const tsconfig = JSON.parse(settings[1]!) as { compilerOptions: Record<string, unknown> };
    // Inside the repository, so that `@plant-store/client` resolves by name (node_modules' workspace link).
    const project = (name: string, compilerOptions: Record<string, unknown>, code = source): string => {
      const dir = fileURLToPath(new URL(`./settings-${name}-${process.pid}/`, import.meta.url));
      mkdirSync(dir, { recursive: true });
      after(() => rmSync(dir, { recursive: true, force: true }));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      writeFileSync(join(dir, 'consumer.ts'), code);
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true }, files: ['consumer.ts'] }));
      return dir;
    };
    const asTold = await tsc(project('readme', tsconfig.compilerOptions));
    assert.equal(asTold.code, 0, asTold.output);
    const old = await tsc(project('es2019', { ...tsconfig.compilerOptions, target: 'ES2019' }));
    assert.match(old.output, /error TS2737/, 'below ES2020 there are no bigint literals');
    const json = "import { parseJson } from '@plant-store/client/json';\nexport const one = parseJson('1');\n";
    assert.equal((await tsc(project('json', tsconfig.compilerOptions, json))).code, 0);
    const node10 = await tsc(project('node10', { ...tsconfig.compilerOptions, module: 'CommonJS', moduleResolution: 'node10' }, json));
    assert.match(node10.output, /error TS2307/, 'resolution that does not read exports finds no @plant-store/client/json');
  });

  it('marks a dozen mistakes', () => {
    assert.ok(marked.length >= 12, `${marked.length} @ts-expect-error lines`);
  });

  it('compiles: every marked line is an error, and nothing else is', async () => {
    const { code, output } = await tsc(FIXTURES);
    assert.equal(code, 0, output);
    assert.equal(output, '');
  });

  it('without the markers, fails on exactly the marked lines', async () => {
    // Inside the repository, so that `@plant-store/client` resolves by name (node_modules' workspace link) as for the fixture.
    const dir = fileURLToPath(new URL(`./stripped-${process.pid}/`, import.meta.url));
    mkdirSync(dir, { recursive: true });
    after(() => rmSync(dir, { recursive: true, force: true }));
    // Each marker becomes an empty line, so that line numbers stay.
    writeFileSync(join(dir, 'consumer.ts'), lines.map((line) => (DIRECTIVE.test(line) ? '' : line)).join('\n'));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(FIXTURES, 'tsconfig.json'), files: ['consumer.ts'] }));
    const { code, output, errorLines } = await tsc(dir);
    assert.notEqual(code, 0);
    assert.deepEqual(
      errorLines.sort((a, b) => a - b),
      marked,
      output,
    );
  });
});
