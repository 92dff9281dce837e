import { int64AsStrings } from '../json/int64-strings.js';
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

/** One event as an SSE frame; its int64 members (`int64`: their names) as strings for a client that asked (Prefer: int64=string). */
export function eventFrame(event: FeedEvent, int64?: ReadonlySet<string>): string {
  const json = int64 === undefined ? eventJson(event) : int64AsStrings(eventJson(event), int64);
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${json}\n\n`;
}

/**
 * The first bytes of a stream: the reconnection delay, and, for a stream that starts at the newest event
 * (no cursor), a `start` frame with that event's id (or FEED_START_ID), so that the client's Last-Event-ID
 * resumes from there even if it is cut off before any event comes. The frame has an (empty) data line:
 * browsers take the id of a frame without data, but other parsers (the eventsource package's) drop such a
 * frame whole. Its type, `start`, reaches no listener of the plant events, nor `onmessage`.
 */
export function preamble(retryMs: number, startId: string | undefined): string {
  return `retry: ${retryMs}\n${startId === undefined ? '' : `id: ${startId}\nevent: start\ndata:\n`}\n`;
}

/** A comment line (ignored by clients), to keep proxies from closing an idle stream. */
export const HEARTBEAT = Buffer.from(': heartbeat\n\n');

/** A comment frame carrying text of one line (a line break would end the comment and start a field). */
export function comment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
