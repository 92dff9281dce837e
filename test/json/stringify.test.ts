import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson, stringifyJson } from '../../src/json/exact.js';
import fc from 'fast-check';
import { FUZZING } from '../tier.js';

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

// parseJson is tested in parse.test.ts.
describe('stringifyJson', () => {
  it('writes a bigint as a plain JSON integer, at any depth', () => {
    assert.equal(
      stringifyJson({ id: INT64_MAX, list: [INT64_MIN, 1n], o: { n: 0n } }),
      '{"id":9223372036854775807,"list":[-9223372036854775808,1],"o":{"n":0}}',
    );
    assert.equal(stringifyJson(2n ** 53n + 1n), '9007199254740993');
  });

  it('writes everything else as JSON.stringify does (property)', FUZZING, () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => assert.equal(stringifyJson(value), JSON.stringify(value))),
      { numRuns: 500 },
    );
    const withDrops = { a: undefined, f: () => 1, d: new Date(0), list: [undefined, 1], n: NaN };
    assert.equal(stringifyJson(withDrops), JSON.stringify(withDrops));
  });

  it('round-trips every int64 exactly through parseJson, as a number when safe (property)', FUZZING, () => {
    fc.assert(
      fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), (id) => {
        const back = (parseJson(stringifyJson({ id })) as { id: number | bigint }).id;
        assert.equal(BigInt(back), id);
        assert.equal(typeof back, Number.isSafeInteger(Number(id)) && BigInt(Number(id)) === id ? 'number' : 'bigint');
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a value that has no JSON text', () => {
    assert.throws(() => stringifyJson(undefined), TypeError);
    assert.throws(() => stringifyJson(() => 1), TypeError);
  });

  it('with a bigint anywhere, writes everything else as JSON.stringify does (property)', FUZZING, () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => assert.equal(stringifyJson([value, 1n]), `[${JSON.stringify(value) ?? 'null'},1]`)),
      { numRuns: 500 },
    );
  });

  it("with a bigint, follows JSON.stringify's rules for toJSON, wrappers and values left out", () => {
    const value = {
      big: 2n ** 64n,
      wrapped: [Object(2n ** 64n) as object, Object(1) as object, Object('s') as object, Object(false) as object],
      date: new Date(0),
      custom: { toJSON: (key: string) => ({ key, id: INT64_MAX }) },
      left: { u: undefined, f: () => 1, s: Symbol('s') },
      list: [undefined, () => 1, Symbol('s'), NaN, -0, Infinity],
    };
    assert.equal(
      stringifyJson(value),
      '{"big":18446744073709551616,"wrapped":[18446744073709551616,1,"s",false],"date":"1970-01-01T00:00:00.000Z",' +
        '"custom":{"key":"custom","id":9223372036854775807},"left":{},"list":[null,null,null,null,0,null]}',
    );
  });

  it('refuses a cycle with a TypeError, with a bigint in it or not', () => {
    const cyclic: Record<string, unknown> = { id: 1n };
    cyclic.self = cyclic;
    assert.throws(() => stringifyJson(cyclic), TypeError);
    const plain: Record<string, unknown> = {};
    plain.self = plain;
    assert.throws(() => stringifyJson(plain), TypeError);
  });

  it('writes a hole in a sparse array as null, as JSON.stringify does', () => {
    const sparse: unknown[] = new Array(3);
    sparse[1] = 1n;
    assert.equal(stringifyJson(sparse), '[null,1,null]');
  });

  it('writes the same bigint twice in one document (a shared value is not a cycle)', () => {
    const shared = { id: INT64_MIN };
    assert.equal(stringifyJson([shared, shared]), '[{"id":-9223372036854775808},{"id":-9223372036854775808}]');
  });
});
