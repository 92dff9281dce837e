import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CATALOGUE } from '../store/search-oracle.js';
import { assertError, testApp } from '../helpers.js';
import { cursorOf, seed } from './search-pages.js';

/**
 * GET /plants's search parameters at their bounds: every bad value of q, tag, sort and cursor (forged and
 * edited cursors, the release before's included) refused with a 400 naming its parameter, the largest
 * good ones taken, and the parameters as the OpenAPI document describes them. (What the parameters find
 * is in search.test.ts.)
 */

describe('GET /plants: the search parameters refused and described', async () => {
  const t = await testApp(after);
  await seed(t, CATALOGUE);

  describe('400 for bad values, naming the parameter', () => {
    const forged = (fields: unknown[]) => Buffer.from(JSON.stringify(fields)).toString('base64url');
    const bad: Array<[string, string]> = [
      ['q=', 'q'],
      [`q=${'x'.repeat(101)}`, 'q'],
      [`q=${'😀'.repeat(101)}`, 'q'],
      ['q=a%00b', 'q'],
      ['q=a&q=b', 'q'],
      [Array.from({ length: 21 }, (_, i) => `tag=t${i}`).join('&'), 'tag'],
      [`tag=ok&tag=${'t'.repeat(65)}`, 'tag'],
      ['tag=a%00', 'tag'],
      ['sort=', 'sort'],
      ['sort=NAME', 'sort'],
      ['sort=tag', 'sort'],
      ['sort=+name', 'sort'],
      ['sort=name&sort=id', 'sort'],
      ['cursor=', 'cursor'],
      ['cursor=not%20base64!', 'cursor'],
      ['cursor=abc', 'cursor'],
      [`cursor=${'A'.repeat(4097)}`, 'cursor'],
      [`cursor=${forged([1, 'x', '1']).slice(0, -1)}`, 'cursor'],
      [`cursor=${Buffer.from('[1,"x","1"]').toString('base64')}=`, 'cursor'],
      [`cursor=${forged([2, 'x', '1'])}`, 'cursor'],
      [`cursor=${forged({ id: 1 } as unknown as unknown[])}`, 'cursor'],
      [`cursor=${forged([1, 'x'])}`, 'cursor'],
      [`cursor=${Buffer.from([0xff, 0xfe]).toString('base64url')}`, 'cursor'],
      ['cursor=a&cursor=b', 'cursor'],
    ];
    for (const [query, parameter] of bad) {
      it(`?${query.slice(0, 50)}`, async () => {
        assertError(await t.call('GET', `/plants?${query}`), 400, `querystring.${parameter}`);
      });
    }

    it('takes q of 1 and of 100 characters (code points, not UTF-16 units), and 20 tags', async () => {
      for (const query of [
        'q=x',
        `q=${'x'.repeat(100)}`,
        `q=${encodeURIComponent('😀'.repeat(100))}`,
        Array.from({ length: 20 }, (_, i) => `tag=t${i}`).join('&'),
      ]) {
        assert.equal((await t.call('GET', `/plants?${query}`)).statusCode, 200, query.slice(0, 40));
      }
    });

    it("refuses a cursor of the release before whose id or name is not valid, even with the right fingerprint; an edited cursor of this one's", async () => {
      // The release before's layout (still taken): [1, the scope's fingerprint, id, name].
      const version = 1;
      const fingerprint = createHash('sha256')
        .update(JSON.stringify(['name', null, []]))
        .digest('base64url')
        .slice(0, 16);
      const good = await cursorOf(t, '/plants?sort=name&limit=1');
      const edited = Buffer.from(good, 'base64url');
      edited[edited.length - 3]! ^= 1;
      assertError(await t.call('GET', `/plants?sort=name&cursor=${edited.toString('base64url')}`), 400, 'querystring.cursor');
      for (const fields of [
        [version, fingerprint, '9223372036854775808', 'a'],
        [version, fingerprint, '1.5', 'a'],
        [version, fingerprint, 1, 'a'],
        [version, fingerprint, '1', 'x'.repeat(257)],
        [version, fingerprint, '1', 'a\u0000'],
        [version, fingerprint, '1', 7],
      ]) {
        assertError(await t.call('GET', `/plants?sort=name&cursor=${forged(fields)}`), 400, 'querystring.cursor');
      }
      assert.equal((await t.call('GET', `/plants?sort=name&cursor=${forged([version, fingerprint, '1', 'M'])}`)).statusCode, 200);
    });
  });

  it('describes q, tag, sort and cursor in the OpenAPI document', async () => {
    const doc = (await t.call('GET', '/openapi.json', { token: null })).json<{
      paths: Record<string, { get: { parameters: Array<{ name: string; schema: Record<string, unknown>; style?: string; explode?: boolean }> } }>;
    }>();
    const parameters = Object.fromEntries(doc.paths['/plants']!.get.parameters.map((p) => [p.name, p]));
    assert.deepEqual([parameters.q?.schema.minLength, parameters.q?.schema.maxLength], [1, 100]);
    assert.equal(parameters.tag?.schema.type, 'array');
    assert.equal(parameters.tag?.schema.maxItems, 20);
    assert.deepEqual([parameters.tag?.style, parameters.tag?.explode], ['form', true]);
    assert.deepEqual(parameters.sort?.schema.enum, ['id', '-id', 'name', '-name']);
    assert.equal(parameters.cursor?.schema.type, 'string');
  });
});
