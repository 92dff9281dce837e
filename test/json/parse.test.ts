import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson } from '../../src/json/exact.js';
import fc from 'fast-check';
import { parse as parseLossless } from 'lossless-json';
import { FUZZING } from '../tier.js';

/**
 * The exact JSON parser (src/json/exact.ts): integers beyond 2^53 as bigints, everything else as JSON.parse.
 * The client package ships it as a copy (@plant-store/client/json), which test/client/feed.test.ts checks is this file.
 */

/** The int64 bounds, written here rather than taken from the code under test. */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** The oracle: lossless-json (the parser this one replaced), with the same rule: a bigint only where a double cannot hold the integer. */
function oracle(text: string): unknown {
  const parseNumber = (digits: string) => {
    const number = Number(digits);
    return /^-?\d+$/.test(digits) && !Number.isSafeInteger(number) ? BigInt(digits) : number;
  };
  // Duplicate keys: the last one wins, as with JSON.parse.
  return parseLossless(text, null, { parseNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/** The error JSON.parse throws for a text, or undefined when it parses. */
function jsonParseError(text: string): Error | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

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

  it('agrees with JSON.parse on any document, but for exact bigints beyond 2^53 (property)', FUZZING, () => {
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

describe('parseJson: marks and strings never meet', () => {
  const BIG = '12345678901234567890';

  it('a string value starting with U+0000 stays as sent, beside an integer beyond 2^53, even one spelling a mark', () => {
    const text = `{"a":"\\u0000","b":"\\u0000\\u0000x","c":"\\u0000${BIG}","d":["\\u0000-1"],"id":${BIG}}`;
    assert.deepEqual(parseJson(text), { a: '\0', b: '\0\0x', c: `\0${BIG}`, d: ['\0-1'], id: BigInt(BIG) });
    assert.deepEqual(parseJson(`["\\u0000${BIG}",${BIG}]`), [`\0${BIG}`, BigInt(BIG)]);
  });

  it('a key starting with U+0000 stays as sent', () => {
    assert.deepEqual(parseJson(`{"\\u0000k":${BIG},"\\u0000${BIG}" : "\\u0000v"}`), { '\0k': BigInt(BIG), [`\0${BIG}`]: '\0v' });
  });

  it('a long digit run inside a string, even where it looks like a whole value, stays text', () => {
    for (const inside of [`a, ${BIG} b`, `[${BIG}]`, `:${BIG},`, `${BIG}`, `-${BIG}`, `x\\" ${BIG} \\"`, `\\\\`]) {
      const text = `{"s":"${inside}","id":${BIG},"t":["${inside}"]}`;
      assert.deepEqual(parseJson(text), { s: JSON.parse(`"${inside}"`), id: BigInt(BIG), t: [JSON.parse(`"${inside}"`)] }, text);
    }
  });

  it('escaped quotes and backslashes before an integer do not hide it', () => {
    assert.deepEqual(parseJson(`["\\"", ${BIG}, "\\\\", ${BIG}, "\\\\\\"", -${BIG}]`), ['"', BigInt(BIG), '\\', BigInt(BIG), '\\"', -BigInt(BIG)]);
  });

  it('whitespace of every kind JSON allows around an integer', () => {
    assert.deepEqual(parseJson(`[ ${BIG} ,\n\t${BIG}\r\n]`), [BigInt(BIG), BigInt(BIG)]);
    assert.deepEqual(parseJson(`{ "a" :\t${BIG} }`), { a: BigInt(BIG) });
    assert.equal(parseJson(` \n${BIG}\t`), BigInt(BIG));
  });

  it('a fraction or an exponent keeps a number a double, whatever its digits', () => {
    const text = `[${BIG}.5, 1.${BIG}, 1e${BIG.slice(0, 3)}, ${BIG}e2, ${BIG}E-2, -1.5e-${BIG.slice(0, 2)}]`;
    assert.deepEqual(parseJson(text), JSON.parse(text));
  });

  it('nests as deep as JSON.parse does (100,000 arrays) with an integer beyond 2^53 at the bottom', () => {
    const depth = 100_000;
    let value = parseJson(`${'['.repeat(depth)}${BIG}${']'.repeat(depth)}`);
    for (let i = 0; i < depth; i++) value = (value as unknown[])[0];
    assert.equal(value, BigInt(BIG));
  });

  it('reads each part of a text once: 200,000 strings, then one holding a digit run that looks like a value', () => {
    // The run inside the last string sends parseJson down the path that steps over every string.
    const text = `[${'"a", 0, '.repeat(200_000)}"x, ${BIG} ,", ${BIG}]`;
    const value = parseJson(text) as unknown[];
    assert.equal(value.length, 400_002);
    assert.deepEqual(value.slice(-2), [`x, ${BIG} ,`, BigInt(BIG)]);
  });
});

describe('parseJson against an oracle (properties)', () => {
  /** Strings made to trouble the marking: digits, quotes, backslashes, U+0000, JSON punctuation. */
  const trouble = fc
    .array(fc.constantFrom('1234567890123456789', '-', '"', '\\', '\0', ',', ':', '[', ']', '{', '}', ' ', 'e', '.', 'a'), { maxLength: 8 })
    .map((parts) => parts.join(''));
  /** Integers on both sides of 2^53 and of int64's bounds. */
  const integer = fc.oneof(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }), fc.integer());
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      integer.map((n) => ({ raw: String(n) })),
      trouble.map((s) => ({ raw: JSON.stringify(s) })),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => ({ raw: JSON.stringify(d) })),
      fc.constantFrom({ raw: 'true' }, { raw: 'null' }),
      fc.array(tie('value'), { maxLength: 4 }).map((items) => ({ raw: `[${items.map((item) => (item as { raw: string }).raw).join(' , ')}]` })),
      fc
        .array(fc.tuple(trouble, tie('value')), { maxLength: 4 })
        .map((members) => ({ raw: `{${members.map(([key, item]) => `${JSON.stringify(key)}:\n${(item as { raw: string }).raw}`).join(',')}}` })),
    ),
  }));
  const text = value.map((v) => (v as { raw: string }).raw);

  it('parses every JSON text exactly as lossless-json does, bigints and all', FUZZING, () => {
    fc.assert(
      fc.property(text, (json) => assert.deepEqual(parseJson(json), oracle(json))),
      { numRuns: 2000 },
    );
  });

  it('refuses a text exactly when JSON.parse does, with its error (a JSON text with one character changed)', FUZZING, () => {
    const edit = fc.tuple(text, fc.nat(), fc.constantFrom('', '"', '\\', ',', ':', '[', '{', '}', '0', '1', '-', 'e', '.', ' ', 'x'), fc.boolean());
    fc.assert(
      fc.property(edit, ([json, where, char, replace]) => {
        const at = where % (json.length + 1);
        const changed = json.slice(0, at) + char + json.slice(replace ? at + 1 : at);
        const expected = jsonParseError(changed);
        if (expected === undefined) assert.deepEqual(parseJson(changed), oracle(changed), changed);
        else assert.throws(() => parseJson(changed), { name: 'SyntaxError', message: expected.message }, changed);
      }),
      { numRuns: 5000 },
    );
  });
});
