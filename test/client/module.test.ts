import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

/**
 * Every module specifier a module compiled by tsc imports or re-exports (type-only imports are gone by
 * then): `import … from '…'`, `import '…'` and `export … from '…'`, each on a line of its own, and `import('…')`.
 */
function specifiers(code: string): string[] {
  const statements = code.matchAll(/^(?:import|export)\s(?:[^'";\n]*\sfrom\s*)?['"]([^'"\n]+)['"];?$/gm);
  const dynamic = code.matchAll(/\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g);
  return [...statements, ...dynamic].map((match) => match[1]!);
}

/** Every module a built entry imports, followed through its relative imports, and the packages they import. */
function closure(entry: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const url = pending.pop()!;
    if (modules.has(url)) continue;
    modules.add(url);
    for (const specifier of specifiers(readFileSync(new URL(url), 'utf8'))) {
      if (specifier.startsWith('.')) pending.push(new URL(specifier, url).href);
      else packages.add(specifier);
    }
  }
  return { modules, packages };
}

describe('@plant-store/client, the modules', () => {
  const entry = import.meta.resolve('@plant-store/client');
  const json = import.meta.resolve('@plant-store/client/json');

  it('resolve by package name, through the exports map, to the built package', async () => {
    assert.match(entry, /\/packages\/client\/dist\/index\.js$/);
    assert.match(json, /\/packages\/client\/dist\/json\.js$/);
    assert.equal(typeof (await import('@plant-store/client')).createClient, 'function');
    const { parseJson, stringifyJson } = await import('@plant-store/client/json');
    assert.equal(typeof parseJson, 'function');
    assert.equal(typeof stringifyJson, 'function');
  });

  it('import nothing from Node, so they run in browsers too: openapi-fetch is the only package outside', () => {
    const client = closure(entry);
    assert.ok(client.modules.size >= 3, [...client.modules].join('\n'));
    assert.deepEqual([...client.packages], ['openapi-fetch']);
    // The parser and the one module copied beside it (where a JSON string ends), nothing else.
    const parser = closure(json);
    assert.deepEqual([...parser.modules], [json, json.replace(/json\.js$/, 'string-end.js')]);
    assert.deepEqual([...parser.packages], []);
  });
});
