/**
 * JSON with exact 64-bit integers, both ways: the service's request bodies and the CLI's output, and, as
 * `@plant-store/client/json`, the client's answers and request bodies (the client's build copies this file
 * into the package: scripts/client-sources.mjs). It lives in the service so that the service's package depends
 * on nothing unpublished. No dependency and no Node-only API: it runs in browsers too. An integer a double cannot hold exactly (beyond ±(2^53 − 1)) is a bigint; every
 * other number is a number, as JSON.parse gives it.
 */

import { closingQuote } from './string-end.js';

/**
 * A run of 16 digits: a number of 15 digits or fewer always fits a double, so only a text with such a run
 * can lose any. Spelt out rather than `\d{16}`, which V8 scans several times slower (5-10x, measured).
 */
const SIXTEEN_DIGITS = '\\d'.repeat(16);
const LONG_DIGIT_RUN = new RegExp(SIXTEEN_DIGITS);
/** The next run of 16 or more digits, with a minus sign before it. */
const LONG_INTEGER = new RegExp(`-?${SIXTEEN_DIGITS}\\d*`, 'g');

/**
 * The exact path marks each integer beyond 2^53 in the text: it becomes the string U+0000 + its digits,
 * which JSON.parse reads and unmarkAll turns into a bigint. A JSON text spells U+0000 only as the escape
 * `\u0000`, so a string value that starts with it gets a second one, and marks and strings never meet.
 */
const MARK = 0;
const MARK_ESCAPE = '\\u0000';

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** True when a key's colon follows `end` (past whitespace): the token before it is an object's key. */
function isKey(text: string, end: number): boolean {
  let at = end;
  while (isSpace(text.charCodeAt(at))) at++;
  return text.charCodeAt(at) === 0x3a; // :
}

/** True when the token at `start` is where a value goes: after `[`, `,`, `:` or at the text's start, past whitespace. */
function isValuePlace(text: string, start: number): boolean {
  let at = start - 1;
  while (at >= 0 && isSpace(text.charCodeAt(at))) at--;
  if (at < 0) return true;
  const code = text.charCodeAt(at);
  return code === 0x5b || code === 0x2c || code === 0x3a; // [ , :
}

/**
 * The integer run `digits` at `start`, if it must be marked: a whole JSON integer (a value, no leading
 * zero, no fraction or exponent after it, not a key) that a double cannot hold.
 */
function mustMark(text: string, start: number, digits: string): boolean {
  const end = start + digits.length;
  const next = text.charCodeAt(end);
  if (next === 0x2e || next === 0x65 || next === 0x45) return false; // . e E: a double's digits
  if (digits.charCodeAt(digits.charCodeAt(0) === 0x2d ? 1 : 0) === 0x30) return false; // a leading zero: not JSON
  if (!isValuePlace(text, start) || isKey(text, end)) return false;
  return !Number.isSafeInteger(Number(digits));
}

/**
 * The text with every integer beyond 2^53 marked, or undefined when there is nothing to mark. The long
 * digit runs are found by LONG_INTEGER, each part of the text looked at once.
 *
 * Without `skipStrings`, a run inside a string is marked too when it looks like a whole value there
 * (`"a, 12345678901234567 b"`); that always breaks the text, since the mark's opening quote then ends the
 * string and its backslash stands outside one, so parseJson tries again with `skipStrings`: strings are
 * then skipped (found with indexOf), and a string value starting with U+0000 gets a second one. Either
 * way, marking never makes JSON of a text that is not: a run is marked only where a number could stand as
 * a whole, and becomes a string, which can stand wherever a number can.
 */
function markedText(text: string, skipStrings: boolean): string | undefined {
  const parts: string[] = [];
  let copied = 0;
  let marks = 0;
  let run: RegExpExecArray | null = null;
  for (let at = 0; at < text.length;) {
    const quote = skipStrings ? text.indexOf('"', at) : -1;
    const outsideEnd = quote === -1 ? text.length : quote;
    // The long digit runs before the next string (a run found inside a string is kept until passed).
    while (true) {
      if (run === null || run.index < at) {
        LONG_INTEGER.lastIndex = at;
        run = LONG_INTEGER.exec(text);
      }
      if (run === null || run.index >= outsideEnd) break;
      const [digits] = run;
      if (mustMark(text, run.index, digits)) {
        parts.push(text.slice(copied, run.index), `"${MARK_ESCAPE}`, digits, '"');
        copied = run.index + digits.length;
        marks++;
      }
      at = run.index + digits.length;
    }
    if (quote === -1) break;
    const end = closingQuote(text, quote + 1);
    if (end === -1) break; // not JSON: JSON.parse will say where
    if (text.startsWith(MARK_ESCAPE, quote + 1) && !isKey(text, end + 1)) {
      parts.push(text.slice(copied, quote + 1), MARK_ESCAPE);
      copied = quote + 1;
    }
    at = end + 1;
  }
  if (marks === 0) return undefined;
  parts.push(text.slice(copied));
  return parts.join('');
}

/** A string value read back from the marked text: the bigint it marks, or the string as sent. */
function unmark(value: string): string | bigint {
  return value.charCodeAt(1) === MARK ? value.slice(1) : BigInt(value.slice(1));
}

/** The marked strings of a parsed document replaced by their values, in place; iterative, as documents may nest deeply. */
function unmarkAll(root: unknown): unknown {
  if (typeof root === 'string') return root.charCodeAt(0) === MARK ? unmark(root) : root;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') {
          if (item.charCodeAt(0) === MARK) node[i] = unmark(item);
        } else if (item !== null && typeof item === 'object') pending.push(item);
      }
      continue;
    }
    const object = node as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      const item = object[key];
      if (typeof item === 'string') {
        // JSON.parse makes "__proto__" an own property; assigning it would call the prototype setter instead.
        if (item.charCodeAt(0) !== MARK) continue;
        if (key === '__proto__') Object.defineProperty(object, key, { value: unmark(item), writable: true, enumerable: true, configurable: true });
        else object[key] = unmark(item);
      } else if (item !== null && typeof item === 'object') pending.push(item);
    }
  }
  return root;
}

/**
 * JSON text to a value, as JSON.parse reads it (same errors, duplicate keys: the last one wins), except
 * that an integer beyond 2^53 is an exact bigint. A text without a run of 16 digits, almost every one,
 * costs JSON.parse alone; one with an integer beyond 2^53 is marked (markedText), parsed by JSON.parse,
 * and its marks replaced by bigints.
 */
export function parseJson(text: string): unknown {
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  // Strings are skipped only when needed: a string value may start with U+0000, or (below) a run inside one was marked.
  const skipStrings = text.includes(MARK_ESCAPE);
  const marked = markedText(text, skipStrings);
  if (marked === undefined) return JSON.parse(text);
  let value: unknown;
  try {
    value = JSON.parse(marked);
  } catch (error) {
    // Not JSON: the error as the text itself has it (its positions, its excerpt), not as marked.
    const plain: unknown = JSON.parse(text);
    if (skipStrings) throw error; // never: marking JSON with its strings skipped keeps it JSON
    // JSON with a long digit run inside a string, marked as if a number: mark again, skipping strings.
    const careful = markedText(text, true);
    return careful === undefined ? plain : unmarkAll(JSON.parse(careful));
  }
  return unmarkAll(value);
}

/** One value as JSON text, by JSON.stringify's rules (toJSON, wrappers, what is left out), bigints as plain integers. */
function serialize(key: string, value: unknown, open: object[]): string | undefined {
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = (toJSON as (key: string) => unknown).call(value, key);
  }
  if (value instanceof Number) value = Number(value);
  else if (value instanceof String) value = String(value);
  else if (value instanceof Boolean || value instanceof BigInt) value = value.valueOf();
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object':
      return value === null ? 'null' : serializeContainer(value, open);
    default:
      return undefined; // undefined, a function, a symbol
  }
}

function serializeContainer(value: object, open: object[]): string {
  if (open.includes(value)) throw new TypeError('Converting circular structure to JSON');
  open.push(value);
  let text: string;
  if (Array.isArray(value)) {
    const items: unknown[] = value;
    const texts: string[] = [];
    // By index, not map(): a hole in a sparse array is null, as JSON.stringify writes it.
    for (let i = 0; i < items.length; i++) texts.push(serialize(String(i), items[i], open) ?? 'null');
    text = `[${texts.join(',')}]`;
  } else {
    const members: string[] = [];
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      const member = serialize(key, object[key], open);
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
    }
    text = `{${members.join(',')}}`;
  }
  open.pop();
  return text;
}

/**
 * JSON text like JSON.stringify's, but a bigint is written as a plain JSON integer (JSON.stringify throws
 * on one, and a string or a double would not be the same JSON number). A value without a bigint costs
 * JSON.stringify alone.
 */
export function stringifyJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // A bigint (or a cycle, which serialize refuses the same way).
    if (!(error instanceof TypeError)) throw error;
    text = serialize('', value, []);
  }
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON representation`);
  return text;
}
