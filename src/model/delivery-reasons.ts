/** Texts the deliveries log and the endpoints show, the same on every store. */

/** Why a message queued for a disabled endpoint is failed from the start (a replay sends it). */
export const DISABLED_AT_EVENT = 'the endpoint was disabled when the event happened';

/** Why an endpoint was disabled after its receiver answered 410 Gone. */
export function goneReason(at: number): string {
  return `the receiver answered 410 Gone at ${new Date(at).toISOString()}; PATCH {"enabled": true} to resume`;
}

/** Why an endpoint was disabled after failing too long. */
export function failingTooLong(disableAfterMs: number): string {
  const hours = disableAfterMs / 3_600_000;
  return `every delivery failed for ${Number.isInteger(hours) ? hours : Number(hours.toFixed(3))} hours, with no success; PATCH {"enabled": true} to resume`;
}
