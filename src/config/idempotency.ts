import { int, type Setting } from './setting.js';

/** Idempotency-Key: how long an answer is kept for retries. */

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;
const LEAST_MS = 1000;
const MOST_MS = 30 * 86_400_000;

/** `24h`, `90m`, `30s`, `7d`, `1500ms` as milliseconds: a number and its unit, never a bare number (seconds? hours?). */
function duration(text: string): number {
  const match = DURATION.exec(text.trim().toLowerCase());
  if (!match) throw new Error(`must be a duration with its unit, such as 24h, 90m, 30s or 7d, got "${text}"`);
  const ms = Math.round(Number(match[1]) * UNITS[match[2]!]!);
  if (ms < LEAST_MS || ms > MOST_MS) throw new Error(`must be from 1s to 30d, got "${text}"`);
  return ms;
}

export const IDEMPOTENCY_SETTINGS = {
  idempotencyKeyTtlMs: {
    env: 'IDEMPOTENCY_KEY_TTL',
    schema: int(
      LEAST_MS,
      MOST_MS,
      86_400_000,
      'How long the answer to a POST sent with an `Idempotency-Key` is kept for its retries (`24h`, `90m`, `30s`, `7d`; 1s to 30d), then swept; see docs/idempotency.md',
    ),
    parse: duration,
    docDefault: '`24h`',
  },
} satisfies Record<string, Setting>;
