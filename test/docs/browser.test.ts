import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { indentJson } from '../../src/docs/browser.js';
import { FUZZING } from '../tier.js';

describe("indentJson: the 'Try it out' console's display of a JSON answer", () => {
  it('lays out any JSON text as JSON.stringify(value, null, 2) does, whatever its spacing (property)', FUZZING, () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t', ' \r\n '), (value, space) => {
        assert.equal(indentJson(JSON.stringify(value, null, space)), JSON.stringify(value, null, 2));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps every digit of a number beyond 2^53, and every string exactly as sent', () => {
    const sent = '[{"id":9223372036854775807,"name":"a\\"}{,:[] \\\\","tag":"\\u00e9"},{ },[]]';
    const shown = [
      '[',
      '  {',
      '    "id": 9223372036854775807,',
      '    "name": "a\\"}{,:[] \\\\",',
      '    "tag": "\\u00e9"',
      '  },',
      '  {},',
      '  []',
      ']',
    ];
    assert.equal(indentJson(sent), shown.join('\n'));
  });
});
