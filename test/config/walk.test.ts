import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { ConfigError, loadConfig, SETTINGS } from '../../src/config/config.js';
import { readSetting } from '../../src/config/read.js';
import type { Setting } from '../../src/config/setting.js';

/**
 * Walks the settings table: for every constraint a setting's schema declares (its items' included), a
 * start with a value just outside it is refused with the setting named, and one just inside it is
 * accepted. The values are derived from the schemas, so a setting or a constraint added later is walked
 * too, and a kind of constraint the walk does not know fails the test (nobody can add one unchecked).
 */

interface Shape {
  type?: string;
  items?: Shape;
  anyOf?: Array<{ const?: unknown }>;
  default?: unknown;
  [keyword: string]: unknown;
}

/** Keywords that are not constraints: what the walk may skip. */
const NOT_CONSTRAINTS = new Set(['type', 'default', 'description', 'items', 'itemName', 'patternMeaning', 'examples']);
const CONSTRAINTS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'anyOf',
]);

/** Settings whose value is checked against another's (config/config.ts checkRelations): the other is set so that only the constraint walked decides. */
const COMPANIONS: Record<string, Record<string, string>> = {
  HEADERS_TIMEOUT_MS: { REQUEST_TIMEOUT_MS: '3600000' },
  REQUEST_TIMEOUT_MS: { HEADERS_TIMEOUT_MS: '100' },
  // The schedule's settings are refused without its directory.
  BACKUP_INTERVAL: { BACKUP_DIR: '/var/backups/plants' },
  BACKUP_KEEP: { BACKUP_DIR: '/var/backups/plants' },
};

/** The environment text of a value. */
const text = (value: unknown): string => (Array.isArray(value) ? value.map(String).join(',') : String(value));

/** Whether `value` passes `schema` (as the setting's reader would judge the text of it). */
function passes(schema: Shape, value: unknown): boolean {
  try {
    readSetting({ env: 'X', schema: schema as TSchema }, text(value));
    return true;
  } catch {
    return false;
  }
}

/** A value `schema` accepts, of about `length` characters for a string. */
function sample(schema: Shape, length?: number): unknown {
  if (schema.anyOf) return 'const' in schema.anyOf[0]! ? schema.anyOf[0].const : sample(schema.anyOf[0] as Shape);
  const examples = (schema.examples as unknown[] | undefined) ?? [];
  if (length === undefined && examples.length > 0) return examples[0];
  if (schema.type === 'integer' || schema.type === 'number') {
    const candidates = [schema.default, schema.minimum, schema.maximum, 1, 100, 1000].filter((v) => typeof v === 'number');
    const found = candidates.find((v) => passes(schema, v));
    assert.ok(found !== undefined, `no sample number for ${JSON.stringify(schema)}`);
    return found;
  }
  if (schema.type === 'boolean') return true;
  if (schema.type === 'array') {
    const item = sample(schema.items ?? {});
    return Array.from({ length: Math.max(1, (schema.minItems as number | undefined) ?? 1) }, () => item);
  }
  const n = length ?? Math.max(1, (schema.minLength as number | undefined) ?? 1);
  if (length === undefined && typeof schema.default === 'string' && schema.default !== '' && passes(schema, schema.default)) return schema.default;
  const found = ['a', 'A', '1', 'x'].map((c) => c.repeat(n)).find((s) => passes(schema, s));
  assert.ok(found !== undefined, `no sample string of length ${n} for ${JSON.stringify(schema)}`);
  return found;
}

interface Probe {
  constraint: string;
  outside: unknown;
  inside: unknown;
}

/** For one schema, a value just outside and one just inside each constraint it declares. */
function probes(schema: Shape): Probe[] {
  const step = schema.type === 'integer' ? 1 : 0.5;
  const found: Probe[] = [];
  for (const [keyword, limit] of Object.entries(schema)) {
    if (NOT_CONSTRAINTS.has(keyword)) continue;
    assert.ok(CONSTRAINTS.has(keyword), `the walk does not know the constraint "${keyword}": teach it (test/config/walk.test.ts)`);
    const n = limit as number;
    const upTo = (value: number) => Math.min(value, (schema.maximum as number | undefined) ?? Infinity);
    switch (keyword) {
      case 'minimum':
        found.push({ constraint: `minimum ${n}`, outside: n - step, inside: n });
        break;
      case 'maximum':
        found.push({ constraint: `maximum ${n}`, outside: n + step, inside: n });
        break;
      case 'exclusiveMinimum':
        found.push({ constraint: `exclusiveMinimum ${n}`, outside: n, inside: upTo(n + step) });
        break;
      case 'exclusiveMaximum':
        found.push({ constraint: `exclusiveMaximum ${n}`, outside: n, inside: n - step });
        break;
      case 'minLength': {
        const inside = sample(schema, n) as string;
        found.push({ constraint: `minLength ${n}`, outside: inside.slice(0, n - 1), inside });
        break;
      }
      case 'maxLength': {
        const inside = sample(schema, n) as string;
        found.push({ constraint: `maxLength ${n}`, outside: inside + inside[0]!, inside });
        break;
      }
      case 'pattern': {
        const base = sample(schema) as string;
        const outside = [' ', '"', '*', '%', '\\', '\u00e9', '#']
          .map((c) => `${base}${c}${base}`)
          .find((s) => !new RegExp(String(limit), 'u').test(s));
        assert.ok(outside !== undefined, `no string outside the pattern ${String(limit)}`);
        found.push({ constraint: `pattern ${String(limit)}`, outside, inside: base });
        break;
      }
      case 'minItems':
      case 'maxItems': {
        const item = sample(schema.items ?? {});
        const count = keyword === 'minItems' ? n - 1 : n + 1;
        found.push({
          constraint: `${keyword} ${n}`,
          outside: Array.from({ length: count }, () => item),
          inside: Array.from({ length: n }, () => item),
        });
        break;
      }
      case 'anyOf': {
        const branches = schema.anyOf ?? [];
        if (branches.every((branch) => 'const' in branch)) {
          // A choice among words: each is taken, another word is refused.
          const words = branches.map((branch) => String(branch.const));
          for (const word of words) found.push({ constraint: `one of ${words.join('|')}`, outside: 'none-of-these', inside: word });
        } else {
          // A choice among kinds of value: each kind's constraints are walked.
          for (const branch of branches as Shape[]) {
            if ('const' in branch) found.push({ constraint: `the value ${String(branch.const)}`, outside: 'none-of-these', inside: branch.const });
            else for (const probe of probes(branch)) found.push({ ...probe, constraint: `${String(branch.type)}: ${probe.constraint}` });
          }
        }
        break;
      }
    }
  }
  // An array's items are constraints too: walked one item at a time, the others valid.
  if (schema.type === 'array' && schema.items) {
    const others = sample(schema) as unknown[];
    for (const probe of probes(schema.items)) {
      found.push({
        constraint: `items: ${probe.constraint}`,
        outside: [...others.slice(1), probe.outside],
        inside: [...others.slice(1), probe.inside],
      });
    }
  }
  return found;
}

function start(setting: Setting, value: unknown): unknown {
  return loadConfig({ ...COMPANIONS[setting.env], [setting.env]: text(value) });
}

describe('every constraint of the settings table, walked', () => {
  const settings = Object.values(SETTINGS) as Setting[];
  let walked = 0;

  for (const setting of settings) {
    for (const probe of probes(setting.schema)) {
      walked++;
      it(`${setting.env}: ${probe.constraint}`, () => {
        if (text(probe.outside).trim() === '') {
          // Just outside is the empty text, which means "unset": the default, never a value that breaks the rule.
          assert.doesNotThrow(() => start(setting, ''));
        } else {
          assert.throws(
            () => start(setting, probe.outside),
            (error: unknown) =>
              error instanceof ConfigError &&
              error.setting === setting.env &&
              error.message.startsWith(`${setting.env}: `) &&
              !error.message.includes('\n'),
            `${setting.env}=${text(probe.outside)} must be refused, naming ${setting.env}`,
          );
        }
        assert.doesNotThrow(() => start(setting, probe.inside), `${setting.env}=${text(probe.inside)} must be accepted`);
      });
    }
  }

  it('walked the constraints (the table declares some)', () => {
    assert.ok(walked >= 40, `only ${walked} constraints found`);
  });

  it("refuses WEBHOOK_RETRY_SCHEDULE with more waits than its schema's maxItems (the drift this walk prevents)", () => {
    assert.throws(
      () => loadConfig({ WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 150 }, () => '5').join(',') }),
      (error: unknown) => error instanceof ConfigError && error.message === 'WEBHOOK_RETRY_SCHEDULE: must have at most 100 waits, got 150',
    );
  });
});
