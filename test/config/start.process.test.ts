import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { run, SERVER_JS } from '../process.js';

/** A server started with a value its setting's schema refuses stops at once, naming the setting on one line. */
describe('a server started with a setting outside its schema', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 150 }, () => '5').join(',') }, 'WEBHOOK_RETRY_SCHEDULE: must have at most 100 waits, got 150'],
    [{ WEBHOOK_RETRY_SCHEDULE: '5,2592001' }, 'WEBHOOK_RETRY_SCHEDULE: wait 2 must be between 0 and 2592000, got 2592001'],
    [{ PG_POOL_SIZE: '1001' }, 'PG_POOL_SIZE: must be between 1 and 1000, got 1001'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT: must be one of auto, json, pretty, got "xml"'],
  ];
  for (const [env, message] of cases) {
    it(message, async () => {
      const result = await run([SERVER_JS], { env: { PORT: '0', ...env } });
      assert.equal(result.code, 1);
      assert.deepEqual(
        result.stderr.split('\n').filter((line) => line !== ''),
        [`plant-store: cannot start: ${message}`],
      );
      assert.equal(result.stdout, '');
    });
  }
});
