import { inspect } from 'node:util';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJson } from '../../src/exact-json.js';
import { INT64_MAX, INT64_MIN, isInt64, parseInt64 } from '../../src/plants/id.js';

describe('parseJson', () => {
  describe('fast path (no run of 16 digits): same as JSON.parse', () => {
    for (const text of ['{"id":1,"name":"a"}', '[1,2.5,-3e2,true,null,"x"]', '{"id":123456789012345}', '{"a":{"b":[{}]}}', '"s"', '0', '-0.0']) {
      it(text, () => assert.deepEqual(parseJson(text), JSON.parse(text)));
    }
  });

  describe('exact path (a run of 16 or more digits)', () => {
    it('keeps integers beyond 2^53 as exact bigints', () => {
      assert.deepEqual(parseJson('{"id":9007199254740993}'), { id: 9007199254740993n });
      assert.deepEqual(parseJson('{"id":-9223372036854775808}'), { id: INT64_MIN });
      assert.deepEqual(parseJson('[9223372036854775807, 9223372036854775808]'), [INT64_MAX, 2n ** 63n]);
    });

    it('gives safe integers as numbers, even when written with 16 digits', () => {
      assert.deepEqual(parseJson('{"id":1000000000000000}'), { id: 1000000000000000 });
      assert.deepEqual(parseJson('{"id":9007199254740991,"n":-9007199254740991}'), { id: 9007199254740991, n: -9007199254740991 });
      assert.deepEqual(parseJson('{"id":0000000000000000}'.replace('0000000000000000', '1234567890123456')), { id: 1234567890123456 });
    });

    it('gives numbers with a fraction or an exponent as doubles (never a bigint)', () => {
      const value = parseJson('{"a":1234567890123456.5,"b":12345678901234567e3,"c":1.0,"d":99999999999999999999.0}') as Record<string, unknown>;
      assert.equal(value.a, 1234567890123456.5);
      assert.equal(value.b, 12345678901234567e3);
      assert.equal(value.c, 1);
      assert.equal(typeof value.d, 'number');
    });

    it('parses everything else as JSON.parse does', () => {
      const text = '{"id":12345678901234567,"name":"n","tag":null,"list":[true,false,1.5,"x"],"o":{"k":-2}}';
      const { id, ...rest } = parseJson(text) as Record<string, unknown>;
      assert.equal(id, 12345678901234567n);
      const { id: _id, ...expected } = JSON.parse(text) as Record<string, unknown>;
      assert.deepEqual(rest, expected);
    });

    it('leaves long digit runs inside strings as they are', () => {
      assert.deepEqual(parseJson('{"name":"12345678901234567890","id":1}'), { name: '12345678901234567890', id: 1 });
      assert.deepEqual(parseJson('{"12345678901234567890":5}'), { '12345678901234567890': 5 });
    });

    it('refuses invalid JSON like JSON.parse', () => {
      for (const text of ['{"id":12345678901234567', '{"id":12345678901234567,}', '[12345678901234567]x', '{"id":012345678901234567}', '']) {
        assert.throws(() => parseJson(text), `${JSON.stringify(text)} should not parse`);
      }
    });
  });

  it('agrees with JSON.parse on any document, but for exact bigints beyond 2^53 (property)', () => {
    const asNumbers = (value: unknown): unknown => {
      if (typeof value === 'bigint') {
        assert.ok(value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER), `${value} should be a number`);
        return Number(value);
      }
      if (Array.isArray(value)) return value.map(asNumbers);
      if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asNumbers(v)]));
      return value;
    };
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, forceExact) => {
        // A 16-digit string sends the document down the exact path.
        const text = JSON.stringify(forceExact ? { value, pad: '1234567890123456' } : value) ?? 'null';
        assert.deepEqual(asNumbers(parseJson(text)), JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  describe('duplicate keys: the last one wins, on both paths', () => {
    it('fast path', () => assert.deepEqual(parseJson('{"id":1,"name":"a","id":2}'), { name: 'a', id: 2 }));
    it('exact path', () => {
      assert.deepEqual(parseJson('{"id":12345678901234567,"name":"a","id":2}'), { id: 2, name: 'a' });
      assert.deepEqual(parseJson('{"id":2,"id":12345678901234567}'), { id: 12345678901234567n });
    });
  });

  describe('__proto__ is an own property, never the prototype, on both paths', () => {
    for (const [path, text] of [
      ['fast', '{"__proto__":{"polluted":true},"id":1}'],
      ['exact', '{"__proto__":{"polluted":true},"id":12345678901234567}'],
    ] as const) {
      it(path, () => {
        const value = parseJson(text) as Record<string, unknown>;
        assert.ok(Object.hasOwn(value, '__proto__'));
        assert.equal(Object.getPrototypeOf(value), Object.prototype);
        assert.equal((value as { polluted?: unknown }).polluted, undefined);
        assert.equal(({} as { polluted?: unknown }).polluted, undefined);
      });
    }
  });
});

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
