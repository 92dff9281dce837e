import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/** BACKUP_DIR, BACKUP_INTERVAL and BACKUP_KEEP: read, bounded, and refused where they would do nothing. */

const DIR = { BACKUP_DIR: '/var/backups/plants' };

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.ok(!error.message.includes('\n'), 'one line');
    return error.message;
  }
  assert.fail(`${JSON.stringify(env)} should be refused`);
}

describe('backup settings', () => {
  it('are off by default: no directory, every 6 h, the newest 8 kept', () => {
    const config = loadConfig({});
    assert.equal(config.backupDir, '');
    assert.equal(config.backupIntervalSeconds, 6 * 3600);
    assert.equal(config.backupKeep, 8);
  });

  it('read BACKUP_INTERVAL in seconds, minutes, hours or days, a bare number as seconds', () => {
    for (const [text, seconds] of [
      ['1s', 1],
      ['90', 90],
      ['30m', 1800],
      ['6h', 21_600],
      ['6H', 21_600],
      [' 1d ', 86_400],
      ['30d', 2_592_000],
    ] as const) {
      assert.equal(loadConfig({ ...DIR, BACKUP_INTERVAL: text }).backupIntervalSeconds, seconds, text);
    }
  });

  it('refuse an interval that is no duration or out of bounds, naming the setting', () => {
    for (const text of ['6x', '1.5h', '-1h', 'h', '6 hours', '1h30m']) {
      assert.equal(
        refusal({ ...DIR, BACKUP_INTERVAL: text }),
        `BACKUP_INTERVAL: must be a duration such as 30m, 6h or 1d (s, m, h or d; a bare number is seconds), got "${text}"`,
      );
    }
    for (const text of ['0', '0s', '31d', '721h'])
      assert.equal(refusal({ ...DIR, BACKUP_INTERVAL: text }), `BACKUP_INTERVAL: must be between 1s and 30d, got "${text}"`);
    assert.match(refusal({ ...DIR, BACKUP_KEEP: '0' }), /^BACKUP_KEEP: must be between 1 and 10000, got 0$/);
  });

  it('refuse BACKUP_INTERVAL or BACKUP_KEEP without BACKUP_DIR: they would do nothing', () => {
    assert.equal(refusal({ BACKUP_INTERVAL: '1h' }), 'BACKUP_INTERVAL: is set but backups are off: set BACKUP_DIR');
    assert.equal(refusal({ BACKUP_KEEP: '3' }), 'BACKUP_KEEP: is set but backups are off: set BACKUP_DIR');
  });

  it('refuse BACKUP_DIR with a PostgreSQL DATABASE_URL, pointing to PostgreSQL’s own tools', () => {
    assert.equal(
      refusal({ ...DIR, DATABASE_URL: 'postgres://u:p@db/plants' }),
      'BACKUP_DIR: takes SQLite backups; back up PostgreSQL with pg_dump or pg_basebackup (see docs/backups.md)',
    );
  });
});
