import { open } from 'node:fs/promises';
import type { ImportFormat } from '../plants/import.js';

/**
 * What `plant-store plants import` reads: a file, opened before anything else so that a missing or
 * unreadable one is one clear line, or standard input; and its format, when not given, from its first
 * byte that is not white space: `[` a JSON array, `{` NDJSON, anything else CSV (whose header starts
 * with a column's name).
 */

/** Why a file cannot be read, in words, by its error code. */
const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder',
  ENOTDIR: 'a part of its path is not a folder',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
};

function unreadable(file: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return new Error(`cannot read ${file}: ${REASONS[code] ?? (error instanceof Error ? error.message : String(error))}`);
}

/** The bytes of FILE, or of standard input for `-`; a file that cannot be read is an error naming it. */
export async function openSource(file: string): Promise<AsyncIterable<Buffer>> {
  if (file === '-') {
    // Nothing piped in: the command would wait for typing that nobody means to do.
    if (process.stdin.isTTY)
      throw new Error('- reads standard input, which is a terminal here: pipe the plants in (plant-store plants import - < plants.ndjson)');
    return process.stdin;
  }
  try {
    const handle = await open(file, 'r');
    if ((await handle.stat()).isDirectory()) {
      await handle.close();
      throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    }
    return (async function* () {
      try {
        for await (const chunk of handle.createReadStream({ autoClose: false })) yield chunk as Buffer;
      } catch (error) {
        throw unreadable(file, error);
      } finally {
        await handle.close();
      }
    })();
  } catch (error) {
    throw unreadable(file, error);
  }
}

const WHITE_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const BOM = [0xef, 0xbb, 0xbf];

/** The format the first meaningful byte says, and the bytes again, every one of them, from the start. */
export async function sniff(source: AsyncIterable<Buffer>): Promise<{ format: ImportFormat; bytes: AsyncIterable<Buffer> }> {
  const iterator = source[Symbol.asyncIterator]();
  const held: Buffer[] = [];
  let seen = 0;
  let first: number | undefined;
  while (first === undefined) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    held.push(chunk);
    for (const byte of chunk) {
      const index = seen++;
      if (index < 3 && byte === BOM[index]) continue;
      if (!WHITE_SPACE.has(byte)) {
        first = byte;
        break;
      }
    }
  }
  const format: ImportFormat = first === 0x5b ? 'json' : first === 0x7b || first === undefined ? 'ndjson' : 'csv';
  return {
    format,
    bytes: (async function* () {
      yield* held;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    })(),
  };
}
