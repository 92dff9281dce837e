import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isOurs, roleOf, WORKER_ENV } from '../../src/process/protocol.js';

/** The supervisor's word to a worker as it forks it, read back; what a worker makes of none or of a mangled one. */

test('a role given is read back as given', () => {
  const role = { slot: 2, announce: true, backups: false, replaces: '1.0.0' };
  assert.deepEqual(roleOf({ [WORKER_ENV]: JSON.stringify(role) }), role);
});

test('no role, or one that does not parse, is the smallest: slot 0, saying nothing, taking no backups', () => {
  for (const text of [undefined, '', 'not json', '[]', '{"slot":"two","announce":"yes","replaces":3}']) {
    assert.deepEqual(roleOf({ [WORKER_ENV]: text }), { slot: 0, announce: false, backups: false }, String(text));
  }
});

test('fields of a later protocol are ignored', () => {
  assert.deepEqual(roleOf({ [WORKER_ENV]: '{"slot":1,"announce":false,"backups":true,"weight":3}' }), { slot: 1, announce: false, backups: true });
});

test("messages of this protocol are told from others on the channel (prom-client's)", () => {
  assert.equal(isOurs({ plantStore: 'ready', version: '1.0.0' }), true);
  for (const other of [{ type: 'prom-client:getMetricsReq' }, 'ready', null, 42, { plantStore: 1 }]) assert.equal(isOurs(other), false);
});
