import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Which database a DATABASE_URL names: `file:…` is SQLite, `postgres://` or `postgresql://` PostgreSQL. */
export function databaseKind(url: string): 'sqlite' | 'postgres' | undefined {
  if (/^file:.+/.test(url)) return 'sqlite';
  if (/^postgres(ql)?:\/\/.+/.test(url)) return 'postgres';
  return undefined;
}

/** The file a `file:` URL names: `file:/abs/path.db`, `file:./relative.db`, `file:///abs/path.db`. */
export function sqlitePath(url: string): string {
  if (url.startsWith('file://')) return fileURLToPath(url);
  return resolve(url.slice('file:'.length));
}

/** Hides the password of a URL so that a message or a log line never carries it. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
