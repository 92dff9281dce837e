import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstRoundedNumber, ROUNDED_CANDIDATE } from '../../src/json/rounded-numbers.js';

/** Numbers that are not integers but a double reads as integers: found, with the key they are the value of. */
describe('firstRoundedNumber', () => {
  for (const [text, number, key] of [
    ['{"id":41.99999999999999999,"name":"x"}', '41.99999999999999999', 'id'],
    ['{"id":1e-400}', '1e-400', 'id'],
    ['{"id":-1E-400}', '-1E-400', 'id'],
    ['{"name":"x", "id" : 9007199254740990.5}', '9007199254740990.5', 'id'],
    ['{"id":6000.0000000000001}', '6000.0000000000001', 'id'],
    ['{"id":4.00000000000000001e1}', '4.00000000000000001e1', 'id'],
    ['[1, 2.0000000000000001]', '2.0000000000000001', undefined],
    ['{"a":{"b":1},"limit":1.00000000000000001}', '1.00000000000000001', 'limit'],
  ] as const) {
    it(`finds ${number} in ${text}`, () => {
      assert.ok(ROUNDED_CANDIDATE.test(text));
      assert.deepEqual(firstRoundedNumber(text), { number, key });
    });
  }

  for (const text of [
    '{"id":1.0}',
    '{"id":1e3}',
    '{"id":100e-2}',
    '{"id":1.5}',
    '{"id":0.0e5,"n":-0.0}',
    '{"id":1E+2}',
    '{"id":12345678901234567890.000}',
    '{"id":1e400}',
    '{"name":"41.99999999999999999 and 1e-400","id":7}',
    '{"name":"a \\" 1e-400","id":7}',
    '{"41.99999999999999999":1}',
  ]) {
    it(`finds none in ${text}`, () => {
      assert.equal(firstRoundedNumber(text), undefined);
    });
  }
});
