import { closingQuote } from './string-end.js';

/**
 * Numbers of a JSON text that are not integers, yet read as integers once JSON.parse rounds them to a
 * double: `41.99999999999999999` is 42, `1e-400` is 0, `9007199254740990.5` is 9007199254740990. Every
 * number of the API is an integer (an id, a limit), so such a number, read as the integer beside it,
 * would name another plant than the client's arithmetic did (`1.5` is refused as not an integer; these
 * were not). Only a text with a digit before `.`, `e` or `E` can hold one (ROUNDED_CANDIDATE, one scan).
 */

export const ROUNDED_CANDIDATE = /\d[.eE]/;

/** A JSON number at a position (sticky): its sign and integer digits, its fraction, its exponent. */
const NUMBER = /-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;

/** The first such number of `text`, and the key whose value it is (when it is one), or undefined. */
export function firstRoundedNumber(text: string): { number: string; key: string | undefined } | undefined {
  let key: string | undefined;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x22) {
      // A string: a key when a colon follows it (the value after it is its member's).
      const end = closingQuote(text, at + 1);
      if (end === -1) return undefined;
      let next = end + 1;
      while (text.charCodeAt(next) === 0x20 || text.charCodeAt(next) === 0x09 || text.charCodeAt(next) === 0x0a || text.charCodeAt(next) === 0x0d)
        next++;
      if (text.charCodeAt(next) === 0x3a) key = text.slice(at + 1, end);
      at = end;
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      NUMBER.lastIndex = at;
      const match = NUMBER.exec(text);
      if (match === null) continue;
      const [number, whole = '', fraction, exponent] = match;
      if ((fraction !== undefined || exponent !== undefined) && roundedToInteger(number, whole, fraction ?? '', Number(exponent ?? 0))) {
        return { number, key };
      }
      at += number.length - 1;
    }
  }
  return undefined;
}

/** True when `number` (whole.fraction × 10^exponent) is not an integer, but the double it is read as is one. */
function roundedToInteger(number: string, whole: string, fraction: string, exponent: number): boolean {
  if (!Number.isInteger(Number(number))) return false;
  // The decimal point moved by the exponent: every digit after it must be zero for an integer.
  const digits = whole + fraction;
  const point = whole.length + exponent;
  const after = point <= 0 ? digits : digits.slice(Math.min(point, digits.length));
  return /[1-9]/.test(after);
}
