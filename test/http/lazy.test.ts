import assert from 'node:assert/strict';
import { test } from 'node:test';
import { once } from '../../src/http/lazy.js';

/** What only some requests need is made at the first of them, then kept (src/http/lazy.ts; used by the docs page and the console). */

test('the value is made at its first use, not before, and only once', () => {
  let made = 0;
  const file = once(() => ({ body: `made ${++made}` }));
  assert.equal(made, 0);
  const first = file();
  assert.deepEqual(first, { body: 'made 1' });
  assert.equal(file(), first);
  assert.equal(made, 1);
});

test('a failure to make it is thrown to the caller, and the next use tries again', () => {
  let calls = 0;
  const file = once(() => {
    if (++calls === 1) throw new Error('not there yet');
    return 'there';
  });
  assert.throws(file, /not there yet/);
  assert.equal(file(), 'there');
  assert.equal(calls, 2);
});
