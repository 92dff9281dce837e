/**
 * JSON text with the int64 members written as strings (`"id":9007199254740993` → `"id":"9007199254740993"`),
 * for a JavaScript client that asked for them (`Prefer: int64=string`): JSON.parse turns an integer beyond
 * 2^53 into the nearest double, a string it keeps. Which members: those named in `keys` whose value is an
 * integer, wherever they are (`"id"` of a plant, of an event's plant; `"plantId"` of a delivery); a member
 * of the same name holding a string (an event's own `"id":"msg_…"`) or anything else is left as it is. The
 * text is the service's own JSON (valid, no key escaped), read once, its strings stepped over whole.
 */

import { closingQuote } from './string-end.js';

/** JSON's whitespace. */
function skipSpace(text: string, at: number): number {
  let code = text.charCodeAt(at);
  while (code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d) code = text.charCodeAt(++at);
  return at;
}

/** The end of the integer at `at` (a minus sign, digits), or -1 when no integer stands there whole (a fraction, an exponent, not a number). */
function integerEnd(text: string, at: number): number {
  let end = text.charCodeAt(at) === 0x2d ? at + 1 : at;
  const first = end;
  for (let code = text.charCodeAt(end); code >= 0x30 && code <= 0x39; code = text.charCodeAt(++end));
  if (end === first) return -1;
  const next = text.charCodeAt(end);
  return next === 0x2e || next === 0x65 || next === 0x45 ? -1 : end;
}

/** `text` with the integer values of the members named in `keys` as strings; the text itself when it has none. */
export function int64AsStrings(text: string, keys: ReadonlySet<string>): string {
  let out = '';
  let copied = 0;
  for (let open = text.indexOf('"'); open !== -1;) {
    const close = closingQuote(text, open + 1);
    if (close === -1) break;
    const colon = skipSpace(text, close + 1);
    if (text.charCodeAt(colon) === 0x3a && keys.has(text.slice(open + 1, close))) {
      const value = skipSpace(text, colon + 1);
      const end = integerEnd(text, value);
      if (end !== -1) {
        out += `${text.slice(copied, value)}"${text.slice(value, end)}"`;
        copied = end;
      }
    }
    open = text.indexOf('"', close + 1);
  }
  return copied === 0 ? text : out + text.slice(copied);
}
