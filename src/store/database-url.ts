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

/**
 * Hides the password of a URL so that a message or a log line never carries it: the one in the user
 * part (up to the last @ before the host list, so an unencoded @ in it is hidden too, with several hosts
 * as with one), and libpq's `password=` parameter.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i, (_all, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return `${scheme}${colon === -1 ? userinfo : `${userinfo.slice(0, colon)}:***`}@`;
    })
    .replace(/([?&]password=)[^&#]*/gi, '$1***');
}
