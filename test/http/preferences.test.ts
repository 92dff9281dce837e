import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { preferences, preferredHandling, prefersExactCount } from '../../src/http/preferences.js';

describe('the Prefer header (RFC 7240)', () => {
  it('reads preferences, comma separated, names in any case, values lower-cased and unquoted', () => {
    assert.deepEqual(
      [...preferences('count=exact, Handling="STRICT"; foo=bar, respond-async')],
      [
        ['count', 'exact'],
        ['handling', 'strict'],
        ['respond-async', ''],
      ],
    );
  });

  it('takes the first of a preference given twice, as several header lines arrive joined', () => {
    assert.equal(preferredHandling('handling=lenient, handling=strict'), 'lenient');
    assert.equal(preferredHandling(['handling=strict', 'handling=lenient']), 'strict');
  });

  it('knows handling=strict and handling=lenient, and nothing else', () => {
    assert.equal(preferredHandling('handling=strict'), 'strict');
    assert.equal(preferredHandling(' handling = lenient '), 'lenient');
    for (const other of [undefined, '', 'handling', 'handling=', 'handling=strictly', 'return=minimal', ',,,', ';handling=strict']) {
      assert.equal(preferredHandling(other), undefined, String(other));
    }
  });

  it('count=exact, beside others', () => {
    assert.equal(prefersExactCount('count=exact'), true);
    assert.equal(prefersExactCount('handling=strict, COUNT=Exact'), true);
    assert.equal(prefersExactCount('count=planned'), false);
    assert.equal(prefersExactCount(undefined), false);
  });
});
