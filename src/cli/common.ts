import { existsSync } from 'node:fs';
import { stringifyJson } from '../json/exact.js';
import { loadConfig, type Config } from '../config/config.js';
import { databaseKind, sqlitePath } from '../store/database-url.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

/**
 * Opens the store DATABASE_URL names (the server's), runs `work`, and closes it. A SQLite file that does
 * not exist yet is refused, naming the path it resolved to: run from another folder, a relative
 * DATABASE_URL would otherwise make a new, empty store there that no server reads. Only the server and
 * `plant-store migrate` (`create`) make a store.
 */
export async function withStore<T>(work: (store: Store, config: Config) => Promise<T>, { create = false } = {}): Promise<T> {
  const config = loadConfig();
  if (!create && databaseKind(config.databaseUrl) === 'sqlite') {
    const file = sqlitePath(config.databaseUrl);
    if (!existsSync(file)) {
      const relative = !config.databaseUrl.startsWith('file:/');
      const given = `DATABASE_URL=${config.databaseUrl}${process.env.DATABASE_URL ? '' : ', the default'}${relative ? `, relative to ${process.cwd()}` : ''}`;
      throw new Error(
        `no store at ${file} (${given}): run this where the server runs, or set DATABASE_URL to the server's store; "plant-store migrate" makes a new one`,
      );
    }
  }
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

/**
 * Compact JSON text indented by two spaces a level, as JSON.stringify(value, null, 2) would lay it out.
 * The text is re-laid rather than re-made, so that exact int64 integers stay as the exact writer wrote them.
 */
function indentJson(text: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      if (text[i + 1] === close) {
        out += c + close;
        i++;
      } else out += `${c}\n${'  '.repeat(++depth)}`;
    } else if (c === '}' || c === ']') out += `\n${'  '.repeat(--depth)}${c}`;
    else if (c === ',') out += `,\n${'  '.repeat(depth)}`;
    else if (c === ':') out += ': ';
    else out += c;
  }
  return out;
}

/** JSON, indented; ids beyond 2^53 (bigints) as exact JSON integers, as the API writes them. */
export function printJson(value: unknown): void {
  process.stdout.write(`${indentJson(stringifyJson(value))}\n`);
}
