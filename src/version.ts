import { readFileSync } from 'node:fs';

/** What a release's package.json says of it (its `plantStore` marks what the release can take part in). */
export interface PackageFacts {
  version: string;
  plantStore?: { reloadable?: unknown };
}

/**
 * This package's package.json, found by walking up from `from` (a folder's URL): the same answer from src/
 * (tests of the sources), from dist/src/ (the build) and from an install's bin/, wherever it is installed.
 * Read from disk at each call: the supervisor asks what is installed now. Undefined when none is found.
 */
export function installedPackage(from: URL): PackageFacts | undefined {
  for (let dir = from; ; dir = new URL('../', dir)) {
    try {
      const json = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string } & Partial<PackageFacts>;
      if (json.name === 'plant-store' && typeof json.version === 'string')
        return { version: json.version, ...(json.plantStore && { plantStore: json.plantStore }) };
    } catch {
      // No package.json here (or not one that reads): go on up.
    }
    if (dir.pathname === '/') return undefined;
  }
}

function packageVersion(): string {
  const found = installedPackage(new URL('./', import.meta.url));
  if (found === undefined) throw new Error('plant-store: package.json not found above src/version.ts');
  return found.version;
}

export const VERSION = packageVersion();
