import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTimestamp, timestampMillis } from '../../src/http/timestamps.js';

/** The timestamps a webhook replay's window takes: every text the check lets through is read as its instant. */
describe('RFC 3339 timestamps (http/timestamps.ts)', () => {
  const NOON = Date.UTC(2026, 0, 31, 12, 0, 0);

  it('reads every form the check takes as the instant it names', () => {
    const same: Array<[string, number]> = [
      ['2026-01-31T12:00:00Z', NOON],
      ['2026-01-31t12:00:00z', NOON],
      ['2026-01-31 12:00:00Z', NOON],
      ['2026-01-31T13:00:00+01:00', NOON],
      ['2026-01-31T13:00:00+0100', NOON],
      ['2026-01-31T13:00:00+01', NOON],
      ['2026-01-31T06:30:00-05:30', NOON],
      ['2026-01-31T12:00:00-00:00', NOON],
      ['2026-01-31T12:00:00.5Z', NOON + 500],
      ['2026-01-31T12:00:00.123456789Z', NOON + 123],
      ['2026-02-01T00:58:00+12:59', NOON - 60_000],
    ];
    for (const [text, millis] of same) {
      assert.equal(timestampMillis(text), millis, text);
      assert.equal(isTimestamp(text), true, text);
    }
  });

  it('reads a leap second, which only the last minute of a UTC day has, as the instant after it', () => {
    const next = Date.UTC(2017, 0, 1);
    assert.equal(timestampMillis('2016-12-31T23:59:60Z'), next);
    assert.equal(timestampMillis('2016-12-31T23:59:60.999Z'), next + 999);
    assert.equal(timestampMillis('2017-01-01T00:59:60+01:00'), next);
    assert.equal(timestampMillis('2016-12-31T18:59:60-05:00'), next);
    for (const text of ['2016-12-31T12:00:60Z', '2016-12-31T23:58:60Z', '2016-12-31T23:59:60+01:00', '2016-12-31T23:59:61Z']) {
      assert.equal(timestampMillis(text), undefined, text);
    }
  });

  it('reads the years 0000 to 0099 as themselves, and knows the calendar', () => {
    assert.equal(new Date(timestampMillis('0001-01-01T00:00:00Z')!).getUTCFullYear(), 1);
    assert.equal(new Date(timestampMillis('0099-06-01T00:00:00Z')!).getUTCFullYear(), 99);
    assert.equal(timestampMillis('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
    assert.equal(timestampMillis('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29));
    for (const text of ['2026-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z']) {
      assert.equal(timestampMillis(text), undefined, text);
    }
  });

  it('refuses what is not a timestamp', () => {
    for (const text of [
      '',
      'yesterday',
      '2026-01-31',
      '2026-01-31T12:00:00',
      '2026-01-31T12:00Z',
      '2026-01-31T24:00:00Z',
      '2026-01-31T12:60:00Z',
      '2026-01-31T12:00:00+24:00',
      '2026-01-31T12:00:00+01:60',
      '2026-01-31T12:00:00+1',
      '2026-01-31T12:00:00.Z',
      '2026-01-31\t12:00:00Z',
      '2026-01-31\u00a012:00:00Z',
      '2026-01-31TT12:00:00Z',
      ' 2026-01-31T12:00:00Z',
      '2026-01-31T12:00:00Z ',
      '+02026-01-31T12:00:00Z',
      '２０２６-01-31T12:00:00Z',
    ]) {
      assert.equal(timestampMillis(text), undefined, JSON.stringify(text));
      assert.equal(isTimestamp(text), false, JSON.stringify(text));
    }
  });
});
