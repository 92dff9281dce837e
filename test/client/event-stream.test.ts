import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventStreamReader, type ServerSentEvent } from '@plant-store/client';
import fc from 'fast-check';
import { FUZZING } from '../tier.js';

/**
 * The client package's Server-Sent Events reader (the console's and the CLI's one reader) against the WHATWG
 * HTML standard's event stream interpretation, rule by rule, with the standard's own examples, then as
 * properties: any split of the bytes, any line ends, comments anywhere give the same events.
 */

const utf8 = (text: string) => new TextEncoder().encode(text);

interface Read {
  events: ServerSentEvent[];
  lastEventId: string;
  retry: number | undefined;
}

/** The events of a stream given as chunks of text (or bytes), and the reader's state at its end. */
function read(chunks: ReadonlyArray<string | Uint8Array>, lastEventId?: string): Read {
  const reader = new EventStreamReader(lastEventId);
  const events = chunks.flatMap((chunk) => reader.push(typeof chunk === 'string' ? utf8(chunk) : chunk));
  return { events, lastEventId: reader.lastEventId, retry: reader.retry };
}

const event = (data: string, type = 'message', lastEventId = ''): ServerSentEvent => ({ type, data, lastEventId });

describe("EventStreamReader: the standard's rules", () => {
  it("the standard's first example: data lines joined by LF, one event", () => {
    assert.deepEqual(read(['data: YHOO\ndata: +2\ndata: 10\n\n']).events, [event('YHOO\n+2\n10')]);
  });

  it("the standard's second example: a comment, ids kept across events, an empty id clearing it", () => {
    const stream = ': test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n';
    assert.deepEqual(read([stream]).events, [event('first event', 'message', '1'), event('second event'), event(' third event')]);
  });

  it("the standard's third example: `data` with no colon is an empty line of data; an unfinished event is dropped", () => {
    assert.deepEqual(read(['data\n\ndata\ndata\n\ndata:']).events, [event(''), event('\n')]);
  });

  it("the standard's fourth example: one leading space is stripped, only one", () => {
    assert.deepEqual(read(['data:test\n\ndata: test\n\n']).events, [event('test'), event('test')]);
    assert.deepEqual(read(['data:  two\n\ndata:\ttab\n\n']).events, [event(' two'), event('\ttab')]);
  });

  it('ends lines at CRLF, LF and CR alike, and a CRLF split between chunks is one line end', () => {
    const expected = [event('a\nb', 'plant.created', '7')];
    for (const end of ['\n', '\r', '\r\n']) {
      const stream = ['event: plant.created', 'id: 7', 'data: a', 'data: b', '', ''].join(end);
      assert.deepEqual(read([stream]).events, expected, JSON.stringify(end));
    }
    assert.deepEqual(read(['data: a\r', '\ndata: b\r', '\n\r', '\n']).events, [event('a\nb')]);
    // A CR ends its line at once: the event is dispatched without waiting for the next chunk.
    assert.deepEqual(read(['data: now\r\r']).events, [event('now')]);
    // CR CR LF: a line end, then a blank line ended by CRLF.
    assert.deepEqual(read(['data: x\r\r\n']).events, [event('x')]);
  });

  it('drops one leading byte order mark, only at the start of the stream, even split across chunks', () => {
    assert.deepEqual(read(['\uFEFFdata: a\n\n']).events, [event('a')]);
    const bom = utf8('\uFEFF');
    assert.deepEqual(read([bom.slice(0, 1), bom.slice(1), 'data: a\n\n']).events, [event('a')]);
    // A second BOM is part of the first line: its field is "\uFEFFdata", unknown, ignored.
    assert.deepEqual(read(['\uFEFF\uFEFFdata: a\n\n']).events, []);
    assert.deepEqual(read(['data: a\n\n\uFEFFdata: b\n\n']).events, [event('a')]);
  });

  it('decodes UTF-8 split anywhere, and a bad byte as U+FFFD', () => {
    const bytes = utf8('data: Ficus 🌿 élastica\n\n');
    for (let cut = 0; cut <= bytes.length; cut++) {
      assert.deepEqual(read([bytes.slice(0, cut), bytes.slice(cut)]).events, [event('Ficus 🌿 élastica')], `cut at ${cut}`);
    }
    assert.deepEqual(read([new Uint8Array([...utf8('data: a'), 0xff, ...utf8('b\n\n')])]).events, [event('a\uFFFDb')]);
  });

  it('ignores comments, and fields it does not know, anywhere in an event', () => {
    assert.deepEqual(read([':hello\ndata: a\n: between\nfoo: bar\nDATA: no\ndata : no\n:\ndata: b\n\n']).events, [event('a\nb')]);
  });

  it('reads a line without a colon as a field with an empty value', () => {
    assert.deepEqual(read(['event\ndata\n\n']).events, [event('')]);
    // `id` alone clears the last event ID.
    assert.deepEqual(read(['id: 5\ndata: a\n\nid\ndata: b\n\n']).events, [event('a', 'message', '5'), event('b')]);
  });

  it('splits at the first colon only: the value may hold colons', () => {
    assert.deepEqual(read(['data: a: b:c\nevent: x:y\n\n']).events, [event('a: b:c', 'x:y')]);
  });

  it('dispatches on a blank line only: an event unfinished when the stream ends is not dispatched, nor its last line', () => {
    const reader = new EventStreamReader();
    assert.deepEqual(reader.push(utf8('id: 1\ndata: a\n')), []);
    assert.equal(reader.lastEventId, '', 'the id counts once its event is dispatched');
    assert.deepEqual(reader.push(utf8('\n')), [event('a', 'message', '1')]);
    assert.equal(reader.lastEventId, '1');
    assert.deepEqual(read(['data: a']).events, []);
    assert.deepEqual(read(['data: a\n']).events, []);
  });

  it('does not dispatch an event with no data, but its id still becomes the last event ID; its type does not carry over', () => {
    assert.deepEqual(read(['event: plant.created\nid: 3\n\n']), { events: [], lastEventId: '3', retry: undefined });
    assert.deepEqual(read(['event: plant.created\n\ndata: a\n\n']).events, [event('a')]);
    assert.deepEqual(read(['\n\n\n']).events, []);
  });

  it('keeps the last event ID across events until an id changes it, and starts from the one given', () => {
    const stream = 'id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n';
    assert.deepEqual(read([stream]).events, [event('a', 'message', '1'), event('b', 'message', '1'), event('c', 'message', '2')]);
    assert.deepEqual(read(['data: a\n\n'], 'msg_9').events, [event('a', 'message', 'msg_9')]);
    assert.equal(read([], 'msg_9').lastEventId, 'msg_9');
  });

  it('ignores an id holding NUL (keeping the one before), and takes one holding other controls', () => {
    assert.deepEqual(read(['id: 1\ndata: a\n\nid: 2\u00003\ndata: b\n\n']).events, [event('a', 'message', '1'), event('b', 'message', '1')]);
    assert.deepEqual(read(['id: \u0000\ndata: b\n\n']).events, [event('b')]);
    assert.deepEqual(read(['id: a\u0001b\ndata: c\n\n']).events, [event('c', 'message', 'a\u0001b')]);
  });

  it('takes retry only when it is ASCII digits, at once, whatever follows', () => {
    assert.equal(read(['retry: 1500\n']).retry, 1500, 'before any dispatch');
    assert.equal(read(['retry: 0\n']).retry, 0);
    assert.equal(read(['retry: 007\n']).retry, 7);
    for (const bad of ['', ' 100', '100 ', '-1', '1.5', '1e3', '0x10', '٣', '+5', '10a']) {
      assert.equal(read([`retry: 250\n\nretry:${bad === '' ? '' : ` ${bad}`}\n\n`]).retry, 250, JSON.stringify(bad));
    }
    assert.deepEqual(read(['retry: 10\ndata: a\n\n']).events, [event('a')], 'retry makes no event');
  });

  it('takes the last event and id fields of an event, and an empty event type as "message"', () => {
    assert.deepEqual(read(['event: a\nevent: b\nid: 1\nid: 2\ndata: x\n\n']).events, [event('x', 'b', '2')]);
    assert.deepEqual(read(['event:\ndata: x\n\n']).events, [event('x')]);
    assert.deepEqual(read(['event:  spaced\ndata: x\n\n']).events, [event('x', ' spaced')]);
  });

  it("reads the service's own frames: an event with its id, type and JSON data, and a comment heartbeat", () => {
    const body = '{"type":"plant.created","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":9223372036854775807,"name":"Fern"}}';
    const stream = `retry: 2000\n\n: heartbeat\n\nid: msg_01\nevent: plant.created\ndata: ${body}\n\n`;
    assert.deepEqual(read([stream]), { events: [event(body, 'plant.created', 'msg_01')], lastEventId: 'msg_01', retry: 2000 });
  });
});

/** A stream as the standard reads it, written with LF, from events whose data may hold LF but no CR. */
const anEvent = fc.record({
  type: fc.option(fc.stringMatching(/^[a-z.]{1,12}$/), { nil: undefined }),
  id: fc.option(fc.stringMatching(/^[\w-]{0,8}$/), { nil: undefined }),
  data: fc.array(
    fc.string({ unit: 'grapheme' }).map((text) => text.replace(/[\r\n]/g, '')),
    { minLength: 1, maxLength: 4 },
  ),
});
type AnEvent = typeof anEvent extends fc.Arbitrary<infer T> ? T : never;

/** The stream's lines of one event, and what the standard makes of it given the last event ID before it. */
function encode(one: AnEvent): string[] {
  return [
    ...(one.type === undefined ? [] : [`event: ${one.type}`]),
    ...(one.id === undefined ? [] : [`id: ${one.id}`]),
    ...one.data.map((line) => `data: ${line}`),
    '',
  ];
}

function expected(events: AnEvent[]): ServerSentEvent[] {
  let lastEventId = '';
  return events.map((one) => {
    if (one.id !== undefined) lastEventId = one.id;
    return { type: one.type === undefined || one.type === '' ? 'message' : one.type, data: one.data.join('\n'), lastEventId };
  });
}

/** Cuts bytes at the given places (sorted, deduplicated). */
function cut(bytes: Uint8Array, places: number[]): Uint8Array[] {
  const marks = [...new Set(places.map((place) => place % (bytes.length + 1)))].sort((a, b) => a - b);
  return [...marks, bytes.length].map((end, i) => bytes.slice(i === 0 ? 0 : marks[i - 1], end));
}

describe('EventStreamReader: properties', () => {
  it('reads back the events written, however the bytes are cut into chunks', FUZZING, () => {
    fc.assert(
      fc.property(fc.array(anEvent, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), (events, places) => {
        const bytes = utf8(
          events
            .flatMap(encode)
            .map((line) => `${line}\n`)
            .join(''),
        );
        assert.deepEqual(read(cut(bytes, places)).events, expected(events));
      }),
      { numRuns: 500 },
    );
  });

  it('gives the same events whatever line end each line has (CRLF, LF or CR), and with comments between lines', FUZZING, () => {
    const lineEnd = fc.constantFrom('\n', '\r', '\r\n');
    fc.assert(
      fc.property(
        fc.array(anEvent, { maxLength: 5 }),
        fc.infiniteStream(lineEnd),
        fc.infiniteStream(
          fc.option(
            fc.string().map((text) => `:${text.replace(/[\r\n]/g, '')}`),
            { freq: 3 },
          ),
        ),
        fc.array(fc.nat(), { maxLength: 6 }),
        (events, ends, comments, places) => {
          let text = '';
          // A line end; but an LF right after a CR would make one CRLF of them: then CRLF instead.
          const end = (line: string) => {
            const chosen: string = ends.next().value;
            return text.endsWith('\r') && line === '' && chosen === '\n' ? '\r\n' : chosen;
          };
          for (const line of events.flatMap(encode)) {
            const comment = comments.next().value;
            if (comment !== null && line !== '') text += comment + end(comment);
            text += line + end(line);
          }
          assert.deepEqual(read(cut(utf8(text), places)).events, expected(events));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads any bytes at all alike, whole or cut into chunks (events, last event ID, retry)', FUZZING, () => {
    const piece = fc.oneof(fc.constantFrom('data', 'id', 'event', 'retry', ':', ': ', ' ', '\n', '\r', '\r\n', '\u0000', '\uFEFF', '7'), fc.string());
    const text = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));
    fc.assert(
      fc.property(fc.oneof(text.map(utf8), fc.uint8Array({ maxLength: 200 })), fc.array(fc.nat(), { maxLength: 8 }), (bytes, places) => {
        assert.deepEqual(read(cut(bytes, places)), read([bytes]));
      }),
      { numRuns: 1000 },
    );
  });
});
