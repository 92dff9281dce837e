import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { testApp } from '../helpers.js';
import { anyListed, operations, payloadOf, urlOf, type Json } from './route-table.js';

/**
 * Every refusal of a parameter, a header, a cursor or a body an operation cannot read carries a code the
 * document lists for that operation and status: a client (or a contract tool) reading `x-error-codes`
 * knows every code it may meet. Held over the served document's table (route-table.ts), each query
 * parameter and header of each operation sent malformed in turn, so that a parameter added later is too.
 */

/** Values that some parameter's schema refuses: a form, a number, a choice. */
const MALFORMED = ['no-such-form!', '', '-1', '%00'];

describe('every operation: a malformed parameter, header, cursor or body carries a code it documents', async () => {
  const t = await testApp(after);
  const { operations: all } = await operations(t);
  const codesSeen = new Set<string>();

  for (const operation of all) {
    const parameters = (operation.op.parameters ?? []) as Json[];
    const inQuery = parameters.filter((p) => p.in === 'query').map((p) => p.name as string);
    const inHeaders = parameters.filter((p) => p.in === 'header').map((p) => p.name as string);
    const body = payloadOf(operation);
    const typed: Record<string, string> = body === undefined ? {} : { 'content-type': operation.body!.type };

    it(`${operation.method} ${operation.path}: ${[...inQuery, ...inHeaders].join(', ') || 'no parameters'}`, async () => {
      for (const name of inQuery) {
        for (const value of MALFORMED) {
          const res = await t.call(operation.method, `${urlOf(operation)}?${name}=${value}`, { headers: typed, body });
          const code = anyListed(operation, res, `?${name}=${value}`);
          if (code !== undefined) codesSeen.add(code);
        }
      }
      for (const name of inHeaders) {
        for (const value of MALFORMED) {
          const res = await t.call(operation.method, urlOf(operation), { headers: { ...typed, [name]: value }, body });
          const code = anyListed(operation, res, `${name}: ${value}`);
          if (code !== undefined) codesSeen.add(code);
        }
      }
      if (inQuery.includes('cursor')) {
        const res = await t.call(operation.method, `${urlOf(operation)}?cursor=bm90LW1hZGUtaGVyZQ`, { headers: typed, body });
        assert.equal(anyListed(operation, res, 'a cursor it did not make'), 'invalid_cursor');
        if (inQuery.includes('after')) {
          const both = await t.call(operation.method, `${urlOf(operation)}?cursor=x&after=y`, { headers: typed, body });
          assert.ok(anyListed(operation, both, 'cursor and after') !== undefined, both.payload);
        }
      }
      if (operation.body === undefined && operation.method !== 'GET') {
        const unread = await t.call(operation.method, urlOf(operation), { headers: { 'content-type': 'text/plain' }, body: 'x' });
        assert.equal(anyListed(operation, unread, 'a text/plain body'), 'unsupported_media_type');
        const broken = await t.call(operation.method, urlOf(operation), { headers: { 'content-type': 'application/json' }, body: '{' });
        assert.equal(anyListed(operation, broken, 'a broken JSON body'), 'invalid_json');
      }
    });
  }

  it('met malformed values the schemas refuse (the table is not empty of them)', () => {
    assert.ok(codesSeen.has('validation_failed'), [...codesSeen].join(', '));
  });
});
