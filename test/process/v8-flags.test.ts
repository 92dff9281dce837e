import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorSized } from '../../src/process/v8-flags.js';

/** The service's V8 settings (src/process/v8-flags.ts) give way to the operator's own size of the young generation. */

test('without a setting of the young generation, the service sets its own', () => {
  assert.equal(operatorSized([], undefined), false);
  assert.equal(operatorSized(['--enable-source-maps'], '--dns-result-order=ipv4first --max-old-space-size=512'), false);
});

test("the operator's setting wins: on the command line or in NODE_OPTIONS, any of the young generation's flags, in either spelling", () => {
  for (const [execArgv, nodeOptions] of [
    [['--max-semi-space-size=16'], undefined],
    [['--max_semi_space_size=16'], undefined],
    [[], '--max-semi-space-size=32'],
    [['--enable-source-maps'], '--min-semi-space-size=8 --dns-result-order=ipv4first'],
    [['--semi-space-growth-factor=4'], ''],
  ] as const) {
    assert.equal(operatorSized(execArgv, nodeOptions), true, `${execArgv.join(' ')} / ${nodeOptions}`);
  }
});
