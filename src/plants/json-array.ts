import { ImportRowError, rowTooLong } from './import-errors.js';

/**
 * The elements of a JSON array arriving in pieces, each yielded as its own text with its 0-based index,
 * without holding the whole array: a small state machine that tracks strings and nesting only. Each
 * element's text is parsed (and judged) by the caller; this judges only the array's own punctuation, and
 * refuses an element longer than `maxRowBytes` as soon as it is.
 */
export async function* splitJsonArray(source: AsyncIterable<string>, maxRowBytes: number): AsyncGenerator<{ index: number; text: string }> {
  type State = 'start' | 'first' | 'value' | 'after' | 'next' | 'end';
  const element = (at: number, text: string) => {
    if (text.length > maxRowBytes / 3 && Buffer.byteLength(text) > maxRowBytes) throw rowTooLong(`element ${at}`, maxRowBytes);
    return { index: at, text };
  };
  let state: State = 'start';
  let index = 0;
  let parts: string[] = [];
  /** UTF-8 bytes of the element's text held in parts. */
  let partBytes = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let primitive = false;

  for await (const piece of source) {
    // Where the value being read starts in this piece (0 when it began in an earlier one).
    let from = state === 'value' ? 0 : -1;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (state === 'value') {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 0x5c) escaped = true;
          else if (c === 0x22) inString = false;
          continue;
        }
        if (c === 0x22) inString = true;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if (c === 0x7d || c === 0x5d) {
          if (depth === 0) {
            // A primitive element ends at the array's closing bracket.
            parts.push(piece.slice(from, i));
            yield element(index++, parts.join(''));
            parts = [];
            partBytes = 0;
            state = 'end';
            continue;
          }
          depth--;
          if (depth === 0 && !primitive) {
            parts.push(piece.slice(from, i + 1));
            yield element(index++, parts.join(''));
            parts = [];
            partBytes = 0;
            state = 'after';
          }
        } else if (primitive && (c === 0x2c || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d)) {
          parts.push(piece.slice(from, i));
          yield element(index++, parts.join(''));
          parts = [];
          partBytes = 0;
          state = c === 0x2c ? 'next' : 'after';
        }
        continue;
      }
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
      if (state === 'start') {
        if (c !== 0x5b) throw new ImportRowError('the body must be a JSON array of plants (or send application/x-ndjson, one plant per line)');
        state = 'first';
      } else if (state === 'after') {
        if (c === 0x2c) state = 'next';
        else if (c === 0x5d) state = 'end';
        else throw new ImportRowError(`element ${index - 1}: expected "," or "]" after it`);
      } else if (state === 'end') {
        throw new ImportRowError('unexpected text after the end of the array');
      } else if (c === 0x5d && state === 'first') {
        state = 'end';
      } else if (c === 0x5d || c === 0x2c) {
        throw new ImportRowError(`element ${index}: missing (a stray "${String.fromCharCode(c)}")`);
      } else {
        // A value starts (state first or next).
        state = 'value';
        from = i;
        depth = 0;
        primitive = c !== 0x7b && c !== 0x5b;
        if (c === 0x22) inString = true;
        else if (!primitive) depth = 1;
      }
    }
    if (state === 'value') {
      const rest = piece.slice(from);
      partBytes += Buffer.byteLength(rest);
      if (partBytes > maxRowBytes) throw rowTooLong(`element ${index}`, maxRowBytes);
      parts.push(rest);
    }
  }
  if ((state as State) !== 'end')
    throw new ImportRowError(
      (state as State) === 'start' ? 'the body is empty: send a JSON array of plants' : 'the array is not closed: the body ended inside it',
    );
}
