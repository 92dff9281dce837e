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

describe('plant-store/client, the module', () => {
  const entry = import.meta.resolve('plant-store/client');

  it('resolves by package name, through the exports map, to the built client', async () => {
    assert.match(entry, /\/dist\/src\/client\/index\.js$/);
    const client = await import('plant-store/client');
    assert.equal(typeof client.createClient, 'function');
  });

  it('imports nothing from Node, so it runs in browsers too: only openapi-fetch and lossless-json outside itself', () => {
    const packages = new Set<string>();
    const seen = new Set<string>();
    const pending = [entry];
    while (pending.length > 0) {
      const url = pending.pop()!;
      if (seen.has(url)) continue;
      seen.add(url);
      for (const specifier of specifiers(readFileSync(new URL(url), 'utf8'))) {
        if (specifier.startsWith('.')) pending.push(new URL(specifier, url).href);
        else packages.add(specifier);
      }
    }
    assert.ok(seen.size >= 4, [...seen].join('\n'));
    assert.deepEqual([...packages].sort(), ['lossless-json', 'openapi-fetch']);
  });
});
