import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import { INT64_MAX, INT64_MIN, isInt64, parseInt64 } from '../../src/model/plant-id.js';

describe('isInt64', () => {
  it('takes safe integer numbers and int64 bigints', () => {
    for (const value of [0, -0, 1, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, INT64_MAX, INT64_MIN, 2n ** 53n + 1n]) {
      assert.equal(isInt64(value), true, String(value));
    }
  });
  it('refuses everything else', () => {
    for (const value of [1.5, NaN, Infinity, 2 ** 53, -(2 ** 53), 1e20, INT64_MAX + 1n, INT64_MIN - 1n, '1', null, undefined, true, [], {}]) {
      assert.equal(isInt64(value), false, inspect(value));
    }
  });
});

describe('parseInt64', () => {
  it('parses decimal int64 text, numbers when safe and bigints beyond', () => {
    assert.equal(parseInt64('0'), 0);
    assert.equal(parseInt64('-1'), -1);
    assert.equal(parseInt64('123456789012345'), 123456789012345);
    assert.equal(parseInt64('9007199254740991'), 9007199254740991);
    assert.equal(parseInt64('-9007199254740991'), -9007199254740991);
    assert.equal(parseInt64('9007199254740992'), 9007199254740992n);
    assert.equal(parseInt64('9223372036854775807'), INT64_MAX);
    assert.equal(parseInt64('-9223372036854775808'), INT64_MIN);
  });
  it('refuses anything that is not plain decimal int64 text', () => {
    for (const text of [
      '',
      '-',
      '+1',
      ' 1',
      '1 ',
      '01',
      '-01',
      '-0',
      '1.0',
      '1e3',
      '0x1f',
      'abc',
      '١٢',
      '9223372036854775808',
      '-9223372036854775809',
      '99999999999999999999',
    ]) {
      assert.equal(parseInt64(text), undefined, JSON.stringify(text));
    }
  });
});
