import { readFileSync } from 'node:fs';

/**
 * The version in the package's package.json, found by walking up from this module: the same answer from
 * src/ (tests of the sources) and from dist/src/ (the build), wherever the package is installed.
 */
function packageVersion(): string {
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    try {
      const json = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (json.name === 'plant-store' && json.version) return json.version;
    } catch {
      // No package.json here: go on up.
    }
    if (dir.pathname === '/') throw new Error('plant-store: package.json not found above src/version.ts');
  }
}

export const VERSION = packageVersion();
