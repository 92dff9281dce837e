import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl } from '../../src/store/database-url.js';

/** A DATABASE_URL as logs, errors and the CLI show it: the password hidden, everything else as given. */
describe('redactUrl', () => {
  it('hides the password of a URL', () => {
    assert.equal(redactUrl('postgres://u:pw@h/db'), 'postgres://u:***@h/db');
  });

  it('hides passwords of multi-host URLs, in the user part and in a password= parameter', () => {
    assert.equal(redactUrl('postgres://u:pw@h1:5432,h2:5432/db?x=1'), 'postgres://u:***@h1:5432,h2:5432/db?x=1');
    assert.equal(redactUrl('postgres://u:p@ss@h1,[::1]:5433/db'), 'postgres://u:***@h1,[::1]:5433/db');
    assert.equal(redactUrl('postgres://h1,h2/db?user=u&password=secret&sslmode=require'), 'postgres://h1,h2/db?user=u&password=***&sslmode=require');
    assert.equal(redactUrl('postgres://u@h1,h2/db'), 'postgres://u@h1,h2/db');
  });
});
