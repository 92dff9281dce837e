/**
 * Server-Sent Events read by the WHATWG HTML standard's rules ("Server-sent events", the event stream
 * interpretation), exactly: the one reader, which the change feed's follower (follow.ts) reads GET /events
 * with, for the web console and the CLI's `events tail --url` alike. It uses only what Node and browsers
 * both have (TextDecoder).
 *
 * The rules, in the standard's order:
 * - the bytes are decoded as UTF-8 (a bad sequence becomes U+FFFD), one leading byte order mark dropped;
 * - a line ends at CRLF, LF or CR; a line that starts with `:` is a comment;
 * - `name: value` is a field: the name before the first colon, the value after it less one leading space;
 *   a line without a colon is a field of that name with an empty value; unknown field names are ignored;
 * - `event` sets the event type; `data` adds its value and an LF to the data; `id` sets the last event ID
 *   buffer, unless the value holds a NUL; `retry` sets the reconnection time when its value is ASCII digits
 *   only (an empty value is none), and is ignored otherwise;
 * - a blank line dispatches: the last event ID becomes the buffer's (kept across events until an `id`
 *   changes it: an empty `id` clears it); with no data the event is not dispatched; otherwise the data's last
 *   LF is removed and the event has the type given, or `message`; then the data and the type start anew;
 * - at the end of the stream, a line or an event not yet finished is dropped (not dispatched).
 */

/** One dispatched event, as an EventSource gives it (MessageEvent's type, data and lastEventId). */
export interface ServerSentEvent {
  /** The `event` field, or `message` when the event had none (or an empty one). */
  type: string;
  /** The `data` fields, joined by LF. */
  data: string;
  /** The last event ID when it was dispatched: the latest `id` so far, this event's or an earlier one's; '' when none. */
  lastEventId: string;
}

const LF = 10;
const CR = 13;
const DIGITS = /^[0-9]+$/;

/**
 * Reads one stream: push() each chunk of bytes as it arrives and get the events it completes. A new
 * connection gets a new reader (the decoder starts over, as a new stream does), given the last event ID the
 * previous one ended with, to send as Last-Event-ID and to keep.
 */
export class EventStreamReader {
  /** The last event ID string: set at each dispatch (even of an event with no data), '' when none. */
  lastEventId: string;
  /** The reconnection time the stream asked for with `retry`, in milliseconds; undefined until it does. */
  retry: number | undefined;
  /** The standard's "UTF-8 decode": replacement characters for bad bytes, one leading BOM dropped. */
  private readonly decoder = new TextDecoder('utf-8');
  /** The line read so far (its end not yet seen). */
  private line = '';
  /** The last character seen was a CR: an LF right after it belongs to the same line end. */
  private afterCR = false;
  private data = '';
  private type = '';
  private idBuffer: string;

  constructor(lastEventId = '') {
    this.lastEventId = lastEventId;
    this.idBuffer = lastEventId;
  }

  /** Reads a chunk (any split: inside a line, a CRLF or a UTF-8 sequence); the events it completes, in order. */
  push(chunk: Uint8Array): ServerSentEvent[] {
    const text = this.decoder.decode(chunk, { stream: true });
    const events: ServerSentEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== LF && code !== CR) {
        this.afterCR = false;
        continue;
      }
      if (code === LF && this.afterCR) {
        // The second half of a CRLF: its line was read at the CR.
        this.afterCR = false;
        start = i + 1;
        continue;
      }
      this.afterCR = code === CR;
      const line = this.line + text.slice(start, i);
      this.line = '';
      start = i + 1;
      const event = this.readLine(line);
      if (event !== undefined) events.push(event);
    }
    this.line += text.slice(start);
    return events;
  }

  /** One whole line: a field, a comment, or (blank) the end of an event, which it returns when dispatched. */
  private readLine(line: string): ServerSentEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (name) {
      case 'event':
        this.type = value;
        break;
      case 'data':
        this.data += `${value}\n`;
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        break;
      case 'retry':
        if (DIGITS.test(value)) this.retry = Number.parseInt(value, 10);
        break;
    }
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    this.lastEventId = this.idBuffer;
    const { data, type } = this;
    this.data = '';
    this.type = '';
    if (data === '') return undefined;
    return { type: type === '' ? 'message' : type, data: data.slice(0, -1), lastEventId: this.lastEventId };
  }
}
