import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { eventBody } from '../../src/model/events.js';
import { newId } from '../../src/model/ids.js';
import { newSecret, sign, signatureHeader } from '../../src/webhooks/signing.js';

describe('Standard Webhooks signing and bodies', () => {
  it('signatures verify with the standardwebhooks package, and a changed byte does not', () => {
    const secret = newSecret();
    const id = newId('msg');
    const timestamp = Math.floor(Date.now() / 1000);
    const body = eventBody({ type: 'plant.created', plant: { id: 1, name: 'Fern' } }, new Date());
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, id, timestamp, body) };
    new Webhook(secret).verify(body, headers);
    assert.throws(() => new Webhook(secret).verify(body.replace('Fern', 'Fern!'), headers));
    assert.throws(() => new Webhook(newSecret()).verify(body, headers), 'another secret does not verify');
  });

  it('several secrets give several signatures, space-separated, in order', () => {
    const [a, b] = [newSecret(), newSecret()];
    const header = signatureHeader([a, b], 'msg_x', 1, '{}');
    assert.deepEqual(header.split(' '), [sign(a, 'msg_x', 1, '{}'), sign(b, 'msg_x', 1, '{}')]);
  });

  it('a secret is whsec_ and base64 of 32 random bytes, different each time', () => {
    const secrets = new Set(Array.from({ length: 50 }, newSecret));
    assert.equal(secrets.size, 50);
    for (const s of secrets) assert.equal(Buffer.from(s.slice(6), 'base64').length, 32);
  });

  it('bodies: exactly type, timestamp, data; ids exact at the int64 edges; no tag when there is none', () => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    assert.equal(
      eventBody({ type: 'plant.created', plant: { id: 2n ** 63n - 1n, name: 'Max "big"', tag: 'ü' } }, at),
      '{"type":"plant.created","timestamp":"2026-11-22T10:00:00.123Z","data":{"id":9223372036854775807,"name":"Max \\"big\\"","tag":"ü"}}',
    );
    assert.equal(
      eventBody({ type: 'plant.updated', plant: { id: -(2n ** 63n), name: 'Min' } }, at),
      '{"type":"plant.updated","timestamp":"2026-11-22T10:00:00.123Z","data":{"id":-9223372036854775808,"name":"Min"}}',
    );
    assert.equal(
      eventBody({ type: 'plant.deleted', plant: { id: 42 } }, at),
      '{"type":"plant.deleted","timestamp":"2026-11-22T10:00:00.123Z","data":{"id":42}}',
    );
  });

  it('ids: a prefix and 26 Crockford base32 characters, later ones sort later, never a dot', () => {
    const earlier = newId('msg', 1_700_000_000_000);
    const later = newId('msg', 1_700_000_000_001);
    assert.match(earlier, /^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.ok(earlier < later);
    assert.ok(!newId('ep').includes('.'));
    const burst = Array.from({ length: 1000 }, () => newId('msg', 1_800_000_000_000));
    assert.deepEqual([...burst].sort(), burst, 'ids made in one millisecond still count up');
    assert.equal(new Set(burst).size, 1000);
  });
});
