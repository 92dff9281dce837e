import { inspect } from 'node:util';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { validatorCompiler } from '../../src/http/validation.js';
import { ListQuery, NewPlant, PlantIdParams } from '../../src/plants/schema.js';

function compile(schema: object, httpPart: 'body' | 'params' | 'querystring'): ValidateFunction {
  return validatorCompiler({ schema, httpPart, method: 'GET', url: '/test' }) as ValidateFunction;
}

describe('validatorCompiler', () => {
  it('names the failing parameter in every error, whichever failed before (no shared error objects)', () => {
    const params = compile(PlantIdParams, 'params');
    const query = compile(ListQuery, 'querystring');
    const body = compile(NewPlant, 'body');
    for (let round = 0; round < 2; round++) {
      assert.equal(params({ id: 'abc' }), false);
      assert.equal(params.errors?.[0]?.instancePath, '/id');
      assert.equal(query({ after: 'abc' }), false);
      assert.equal(query.errors?.[0]?.instancePath, '/after');
      assert.equal(query({ limit: 'abc' }), false);
      assert.equal(query.errors?.[0]?.instancePath, '/limit');
      assert.equal(body({ id: 1.5, name: 'x' }), false);
      assert.equal(body.errors?.[0]?.instancePath, '/id');
    }
  });

  it('puts the parsed int64 in place of the path text: a number when safe, a bigint beyond', () => {
    const params = compile(PlantIdParams, 'params');
    const small = { id: '42' as unknown };
    assert.equal(params(small), true);
    assert.equal(small.id, 42);
    const big = { id: '9223372036854775807' as unknown };
    assert.equal(params(big), true);
    assert.equal(big.id, 2n ** 63n - 1n);
  });

  it('takes query integers as plain decimal digits only, then checks their bounds', () => {
    const query = compile(ListQuery, 'querystring');
    const ok = { limit: '1000' as unknown };
    assert.equal(query(ok), true);
    assert.equal(ok.limit, 1000);
    for (const limit of ['+5', ' 5', '5 ', '1e2', '0x10', '5.0', '', '0', '1001', '-3']) {
      assert.equal(query({ limit }), false, JSON.stringify(limit));
    }
    assert.equal(query({}), true, 'limit is optional');
  });

  it('never coerces bodies', () => {
    const body = compile(NewPlant, 'body');
    for (const id of ['12', true, null, 1.5, [], {}, 2 ** 53, 2n ** 63n]) {
      assert.equal(body({ id, name: 'x' }), false, inspect(id));
    }
    assert.equal(body({ id: 5, name: 5 }), false);
    assert.equal(body({ id: 2n ** 63n - 1n, name: 'x' }), true);
    assert.equal(body({ id: -(2n ** 63n), name: 'x', tag: 't' }), true);
  });
});
