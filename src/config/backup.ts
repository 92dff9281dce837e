import { Type } from '@sinclair/typebox';
import { int, type Setting } from './setting.js';

/** Scheduled SQLite backups taken by the server (see src/backups/ and docs/backups.md). */

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
/** The shortest interval: a backup waits for the one before it, so a short interval never stacks them up. */
const MIN_INTERVAL_SECONDS = 1;
/** The longest: a month (beyond, a backup is too old to be worth scheduling). */
const MAX_INTERVAL_SECONDS = 30 * 86_400;

/** `30s`, `30m`, `6h`, `1d` or a bare number of seconds, as whole seconds from 1s to 30d (IDEMPOTENCY_KEY_TTL reads its text so too). */
export function parseInterval(text: string): number {
  const match = /^\s*(\d{1,9})\s*([smhd]?)\s*$/i.exec(text);
  if (!match) throw new Error(`must be a duration such as 30m, 6h or 1d (s, m, h or d; a bare number is seconds), got "${text}"`);
  const seconds = Number(match[1]) * UNIT_SECONDS[(match[2]?.toLowerCase() || 's') as keyof typeof UNIT_SECONDS];
  if (seconds < MIN_INTERVAL_SECONDS || seconds > MAX_INTERVAL_SECONDS) throw new Error(`must be between 1s and 30d, got "${text}"`);
  return seconds;
}

export const BACKUP_SETTINGS = {
  backupDir: {
    env: 'BACKUP_DIR',
    schema: Type.String({
      default: '',
      description:
        'Take a backup of the SQLite store into this directory (created if missing) every `BACKUP_INTERVAL`, keeping the newest `BACKUP_KEEP` (see [Backups](backups.md)); refused with a PostgreSQL `DATABASE_URL`',
    }),
    docDefault: 'off',
  },
  backupIntervalSeconds: {
    env: 'BACKUP_INTERVAL',
    schema: Type.Integer({
      minimum: MIN_INTERVAL_SECONDS,
      maximum: MAX_INTERVAL_SECONDS,
      default: 6 * 3600,
      description:
        'Time between scheduled backups, `30m`, `6h`, `1d` (s, m, h, d; a bare number is seconds), from 1s to 30d; counted from the newest backup in `BACKUP_DIR`, so restarts do not delay it',
    }),
    parse: parseInterval,
    docDefault: '`6h`',
  },
  backupKeep: {
    env: 'BACKUP_KEEP',
    schema: int(1, 10_000, 8, 'Scheduled backups kept in `BACKUP_DIR`; older ones (only files the schedule named) are deleted after each new one'),
  },
} satisfies Record<string, Setting>;
