import { Type } from '@sinclair/typebox';
import { parseInterval } from './backup.js';
import type { Setting } from './setting.js';

/** Idempotency-Key: how long what a keyed POST did is kept, to answer its retries (docs/idempotency.md). */

export const IDEMPOTENCY_SETTINGS = {
  idempotencyKeyTtlSeconds: {
    env: 'IDEMPOTENCY_KEY_TTL',
    schema: Type.Integer({
      minimum: 1,
      maximum: 30 * 86_400,
      default: 86_400,
      description:
        'How long what a POST sent with an `Idempotency-Key` did is kept, to answer its retries again, `24h`, `90m`, `7d` (s, m, h, d; a bare number is seconds), from 1s to 30d; then swept (see [Safe retries](idempotency.md))',
    }),
    parse: parseInterval,
    docDefault: '`24h`',
  },
} satisfies Record<string, Setting>;
