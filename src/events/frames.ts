import type { FeedEvent } from '../store/event-store.js';

/**
 * The feed's events as the API writes them: as JSON, `{"id":…,"type":…,"timestamp":…,"data":…}` (the
 * webhook body with its id in front, ids exact), and as Server-Sent Events frames (WHATWG HTML,
 * "Server-sent events": `id:`, `event:`, `data:`, a blank line). The JSON holds no line break (JSON.stringify
 * escapes CR and LF in strings), so one `data:` line carries it whole.
 */

/** One event as JSON. */
export function eventJson(event: FeedEvent): string {
  return `{"id":"${event.id}",${event.body.slice(1)}`;
}

/** One event as an SSE frame. */
export function eventFrame(event: FeedEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${eventJson(event)}\n\n`;
}

/**
 * The first bytes of a stream: the reconnection delay, and, for a stream that starts at the newest event
 * (no cursor), that event's id, so that the client's Last-Event-ID resumes from there even if nothing
 * happens before it reconnects. A frame without data dispatches no event but sets the last event id.
 */
export function preamble(retryMs: number, startId: string | undefined): string {
  return `retry: ${retryMs}\n${startId === undefined ? '' : `id: ${startId}\n`}\n`;
}

/** A comment line (ignored by clients), to keep proxies from closing an idle stream. */
export const HEARTBEAT = Buffer.from(': heartbeat\n\n');
