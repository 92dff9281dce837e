import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { misspeltSettings } from '../../src/config/config.js';
import { settingTypos } from '../../src/config/typos.js';

/** A variable one or two edits from a setting's name is named at start: a misspelt setting is otherwise not set, its default used without a word. */
describe('misspelt settings', () => {
  it('names each variable near a setting, and the setting', () => {
    assert.deepEqual(misspeltSettings({ DATABSE_URL: 'file:/x.db', PLANT_STORE_TOKEN: 'x', METRIC_PORT: '9464', BODYLIMIT: '1' }), [
      'DATABSE_URL is not a setting, and is ignored: did you mean DATABASE_URL? (docs/configuration.md lists the settings)',
      'PLANT_STORE_TOKEN is not a setting, and is ignored: did you mean PLANT_STORE_TOKENS? (docs/configuration.md lists the settings)',
      'METRIC_PORT is not a setting, and is ignored: did you mean METRICS_PORT? (docs/configuration.md lists the settings)',
      'BODYLIMIT is not a setting, and is ignored: did you mean BODY_LIMIT? (docs/configuration.md lists the settings)',
    ]);
  });

  it('says nothing of the settings themselves, nor of other programs’ variables', () => {
    assert.deepEqual(
      misspeltSettings({
        DATABASE_URL: 'file:/x.db',
        PATH: '/usr/bin',
        HOME: '/root',
        NODE_ENV: 'production',
        NODE_OPTIONS: '',
        PLANT_STORE_URL: 'http://x',
        OTEL_SERVICE_NAME: 'x',
        LANG: 'C',
        http_proxy: 'x',
        JOURNAL_STREAM: '8:1',
        INVOCATION_ID: 'x',
      }),
      [],
    );
  });

  it('counts a swap of two neighbouring letters as one edit, and stops past two', () => {
    assert.equal(settingTypos({ DATAABSE_URL: '' }, ['DATABASE_URL']).length, 1);
    assert.equal(settingTypos({ DTAABSE_URL: '' }, ['DATABASE_URL']).length, 1);
    assert.equal(settingTypos({ DTAABSEURL: '' }, ['DATABASE_URL']).length, 0);
  });
});
