import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

/**
 * The user guide (README.md, docs/*.md) names source files as paths from the repository's root, and only
 * files that exist: a file moved or renamed leaves no page pointing at nothing. A bare file name (`feed.ts`
 * in a folder's row of docs/development.md's map) must at least be some source file's name.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The folders a path in the pages may start with. */
const TOP = /^(?:src|test|bench|scripts|console|packages|docs|bin|\.ci)\//;
/** A source file's name, as a bare code span. */
const SOURCE_NAME = /^[\w-][\w.-]*\.(?:ts|tsx|mjs|cjs|js|css)$/;
/** Names a page gives to files the reader makes (the webhook page's receiver), not the repository's. */
const READERS_FILES = new Set(['receiver.mjs']);

function pages(): string[] {
  return [
    'README.md',
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
    for (const page of pages()) {
      for (const [, span] of readFileSync(join(ROOT, page), 'utf8').matchAll(/`([^`\s]+)`/g)) {
        if (!TOP.test(span!) || /[<*]/.test(span!)) continue;
        assert.ok(existsSync(join(ROOT, span!.replace(/[#:].*$/, ''))), `${page}: \`${span!}\` does not exist (name files from the repository root)`);
      }
    }
  });

  it('a bare file name is the name of a source file', () => {
    const names = sourceNames();
    for (const page of pages()) {
      for (const [, span] of readFileSync(join(ROOT, page), 'utf8').matchAll(/`([^`\s]+)`/g)) {
        if (!SOURCE_NAME.test(span!) || READERS_FILES.has(span!)) continue;
        assert.ok(names.has(span!), `${page}: \`${span!}\` is no source file's name (name files from the repository root)`);
      }
    }
  });
});
