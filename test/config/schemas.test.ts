import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { SETTINGS } from '../../src/config/config.js';
import { schemaProblems } from '../../src/config/read.js';

/**
 * A setting's schema is compiled when the setting is given (src/config/read.ts), without Ajv's check
 * against its meta-schema, which cost every start a tenth of a second: that check is here, for every
 * setting, given or not.
 */
describe("the settings' schemas", () => {
  it('are all valid schemas', () => {
    const settings = Object.entries(SETTINGS);
    assert.ok(settings.length >= 30, `${settings.length} settings`);
    for (const [key, setting] of settings) assert.equal(schemaProblems(setting.schema), undefined, key);
  });

  it('a schema that is not valid is told, with what is wrong', () => {
    const problems = schemaProblems({ type: 'integer', minimum: 'one' } as unknown as TSchema);
    assert.match(problems ?? '', /minimum/);
  });
});
