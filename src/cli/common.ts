import { loadConfig, type Config } from '../config.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

/** Bad arguments: exit 2 with the usage, not 1. */
export class UsageError extends Error {}

/** Runs an argument parser; what it rejects is a usage error. */
export function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Opens the store DATABASE_URL names (the server's), runs `work`, and closes it. */
export async function withStore<T>(work: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config);
  try {
    return await work(store, config);
  } finally {
    await store.close();
  }
}

/** Rows as a table with a heading, columns padded to their widest cell. */
export function printTable(heading: string[], rows: string[][]): void {
  const table = [heading, ...rows];
  const widths = heading.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
  for (const row of table) {
    const line = row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
    process.stdout.write(`${line.trimEnd()}\n`);
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
