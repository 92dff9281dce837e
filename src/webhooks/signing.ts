import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): an endpoint's secret is `whsec_`
 * and base64 of random bytes; a delivery is signed with HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"
 * keyed with those bytes, sent as `v1,<base64>`. Receivers verify with any Standard Webhooks library.
 */

const PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export function newSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

function key(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

export function sign(secret: string, webhookId: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key(secret)).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
}

/** The webhook-signature header: one signature per secret, space-separated (the newest secret first, during a rotation). */
export function signatureHeader(secrets: readonly string[], webhookId: string, timestamp: number, body: string): string {
  return secrets.map((secret) => sign(secret, webhookId, timestamp, body)).join(' ');
}
