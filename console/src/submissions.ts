/**
 * The Idempotency-Key of the console's POSTs that make something (docs/idempotency.md): a retry of a
 * submission whose outcome is unknown is sent with the same key, so the service answers it with what the
 * first attempt did, and does nothing twice. Pure, so that the unit tests run it in Node
 * (test/console/token-rules.test.ts).
 */

/** A fresh random UUID (version 4), from getRandomValues: randomUUID exists only on https and loopback pages. */
export function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * How an attempt ended: `answered` with a status, or with no answer at all (the service or the network
 * failed on the way: whether it was done is unknown).
 */
export type Attempt = { answered: true; status: number; code?: string | undefined } | { answered: false };

/**
 * The Idempotency-Key of one form's submissions (POST /tokens, POST /webhooks, POST /plants), so that neither
 * a double click nor a retry makes two tokens, two endpoints, or a plant told as someone else's. A submission gets a new key; a retry of it (the same body, sent again after an attempt
 * whose outcome is unknown) gets the same key, so that the service answers it with what the first attempt
 * did, the same token and secret, and makes none again. The outcome is unknown after no answer, after a 5xx,
 * and after the 409 of a key still in use (`idempotency_key_in_use`: the first attempt may still be running,
 * and a retry once it has finished gets its answer). Any other answer is final (a 409 of a name taken too): the next submission, even of the
 * same body (a name taken meanwhile freed), is a new one, with a new key, and is done anew.
 */
export class Submissions {
  private pending: { body: string; key: string; retried: boolean } | undefined;

  constructor(private readonly makeKey: () => string = newKey) {}

  /** The key to send `body` with (the JSON of what is sent). */
  keyFor(body: string): string {
    if (this.pending?.body === body) {
      this.pending.retried = true;
      return this.pending.key;
    }
    this.pending = { body, key: this.makeKey(), retried: false };
    return this.pending.key;
  }

  /** How the last attempt (the last keyFor) ended. */
  ended(attempt: Attempt): void {
    if (this.pending === undefined) return;
    const unknown = !attempt.answered || attempt.status >= 500 || attempt.code === 'idempotency_key_in_use';
    if (!unknown) this.pending = undefined;
  }
}
