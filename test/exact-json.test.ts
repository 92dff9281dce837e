import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJson, stringifyJson } from '../src/exact-json.js';
import { INT64_MAX, INT64_MIN } from '../src/plants/id.js';

// parseJson is tested with the body parser, in test/http/json.test.ts.
describe('stringifyJson', () => {
  it('writes a bigint as a plain JSON integer, at any depth', () => {
    assert.equal(
      stringifyJson({ id: INT64_MAX, list: [INT64_MIN, 1n], o: { n: 0n } }),
      '{"id":9223372036854775807,"list":[-9223372036854775808,1],"o":{"n":0}}',
    );
    assert.equal(stringifyJson(2n ** 53n + 1n), '9007199254740993');
  });

  it('writes everything else as JSON.stringify does (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => assert.equal(stringifyJson(value), JSON.stringify(value))),
      { numRuns: 500 },
    );
    const withDrops = { a: undefined, f: () => 1, d: new Date(0), list: [undefined, 1], n: NaN };
    assert.equal(stringifyJson(withDrops), JSON.stringify(withDrops));
  });

  it('round-trips every int64 exactly through parseJson, as a number when safe (property)', () => {
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
});
