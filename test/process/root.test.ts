import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rootWarning } from '../../src/process/root.js';

/** A server started as root says so at start (test/process/start.process.test.ts sees it in the log). */
describe('the warning of a server started as root', () => {
  it('is given for user id 0 only, naming the risk and the systemd unit that runs the service as its own user', () => {
    const warning = rootWarning(0);
    assert.match(warning ?? '', /^running as root: a flaw in this service .* would hand over the whole machine/);
    assert.match(warning ?? '', /run it as a user of its own, as the systemd unit in docs\/production\.md does \(User=plant-store\)$/);
    for (const uid of [1, 1000, 65534, undefined]) assert.equal(rootWarning(uid), undefined, String(uid));
  });
});
