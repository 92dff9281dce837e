import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

/**
 * The user guide (README.md, docs/*.md, and bench/RESULTS.md beside it) names source files as paths from the repository's root, and only
 * files that exist: a file moved or renamed leaves no page pointing at nothing. A bare file name (`feed.ts`
 * in a folder's row of docs/development.md's map) must at least be some source file's name.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The folders a path in the pages may start with. */
const TOP = /^(?:src|test|bench|scripts|console|packages|docs|bin|\.ci)\//;
/** A source file's name, as a bare code span. */
const SOURCE_NAME = /^[\w-][\w.-]*\.(?:ts|tsx|mjs|cjs|js|css)$/;
/** Names a page gives to files the reader makes (the webhook page's receiver), or to libraries, not the repository's files. */
const NOT_OURS = new Set(['receiver.mjs', 'postgres.js']);
/** A file's name as a word of docs/development.md's map (its fenced blocks), where names are not code spans. */
const MAP_NAME = /(?<![\w./-])([\w-][\w.-]*\.(?:ts|tsx|mjs|cjs|js|css))(?![\w/])/g;

function pages(): string[] {
  return [
    'README.md',
    // Today's benchmark figures and how to rerun them; the dated records in bench/history/ keep the names of their day.
    'bench/RESULTS.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
}

function sourceNames(): Set<string> {
  const names = new Set<string>();
  for (const folder of ['src', 'test', 'bench', 'scripts', 'console', 'packages/client/src', 'bin']) {
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })) names.add(basename(entry));
  }
  return names;
}

describe("the pages' file names", () => {
  it('a path names a file or folder that exists, from the repository root', () => {
    let checked = 0;
    for (const page of pages()) {
      for (const [, span] of readFileSync(join(ROOT, page), 'utf8').matchAll(/`([^`\s]+)`/g)) {
        if (!TOP.test(span!) || /[<*]/.test(span!)) continue;
        assert.ok(existsSync(join(ROOT, span!.replace(/[#:].*$/, ''))), `${page}: \`${span!}\` does not exist (name files from the repository root)`);
        checked++;
      }
    }
    // The pages name hundreds of paths: none found means the pattern, not the pages, is wrong.
    assert.ok(checked >= 50, `only ${checked} paths found in ${pages().length} pages`);
  });

  it("a bare file name is the name of a source file, in the pages' code and in docs/development.md's map", () => {
    const names = sourceNames();
    const bare: Array<[page: string, name: string]> = [];
    for (const page of pages()) {
      for (const [, span] of readFileSync(join(ROOT, page), 'utf8').matchAll(/`([^`\s]+)`/g)) {
        if (SOURCE_NAME.test(span!)) bare.push([page, span!]);
      }
    }
    const development = readFileSync(join(ROOT, 'docs/development.md'), 'utf8');
    for (const [, block] of development.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)) {
      for (const [, name] of block!.matchAll(MAP_NAME)) bare.push(['docs/development.md', name!]);
    }
    const checked = bare.filter(([, name]) => !NOT_OURS.has(name));
    for (const [page, name] of checked) assert.ok(names.has(name), `${page}: ${name} is no source file's name (name files from the repository root)`);
    // The map alone names hundreds: none found means the patterns, not the pages, are wrong.
    assert.ok(checked.length >= 100, `only ${checked.length} bare file names found`);
  });
});
