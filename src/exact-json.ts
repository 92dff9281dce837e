import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { toPlantId } from './plants/id.js';

/**
 * JSON with exact 64-bit integers, both ways, for the server (request bodies) and the client (answers,
 * request bodies) alike. No Node-only import: the client runs in browsers too.
 */

/**
 * JSON.parse turns every number into a double, which loses digits past 2^53. A number of 15 digits or
 * fewer always fits, so only a text with a run of 16 or more digits can lose any; every other text takes
 * the fast path through JSON.parse unchanged. The slow path keeps integers that do not fit a double as
 * bigint (and safe ones as numbers: toPlantId).
 */
const LONG_DIGIT_RUN = /\d{16}/;

/**
 * Arrays and objects nested deeper than this are refused, whichever parser would read the text. The
 * service's documents need 2 levels (an endpoint's events list in its object), so 64 leaves room for any
 * field a client adds, while a recursive parser (the exact one below) stays far from the stack's end:
 * without a limit, 200,000 levels gave "Maximum call stack size exceeded" only when an id had 16 digits.
 */
export const JSON_MAX_DEPTH = 64;

/** A JSON text nested deeper than JSON_MAX_DEPTH; the message says so in words for the client. */
export class JsonDepthError extends Error {
  constructor() {
    super(`nested deeper than ${JSON_MAX_DEPTH} levels of arrays and objects`);
    this.name = 'JsonDepthError';
  }
}

/** More than `limit` of these characters in `text`. */
function moreThan(text: string, characters: readonly string[], limit: number): boolean {
  let count = 0;
  for (const character of characters) {
    for (let at = text.indexOf(character); at !== -1; at = text.indexOf(character, at + 1)) if (++count > limit) return true;
  }
  return false;
}

/**
 * Whether arrays and objects nest deeper than JSON_MAX_DEPTH, brackets inside strings aside. Texts shorter
 * than the limit, or with no more opening brackets than it, cannot (most bodies and import rows stop there).
 */
function tooDeep(text: string): boolean {
  if (text.length <= JSON_MAX_DEPTH || !moreThan(text, ['[', '{'], JSON_MAX_DEPTH)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > JSON_MAX_DEPTH) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function parseNumber(text: string): number | bigint {
  return /^-?\d+$/.test(text) ? toPlantId(text) : Number(text);
}

/** JSON text to a value, int64 exact; throws a SyntaxError, or a JsonDepthError past JSON_MAX_DEPTH (on both paths alike). */
export function parseJson(text: string): unknown {
  if (tooDeep(text)) throw new JsonDepthError();
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  // Duplicate keys: the last one wins, as with JSON.parse.
  return parseLossless(text, null, { parseNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/**
 * JSON text like JSON.stringify's, but a bigint is written as a plain JSON integer (JSON.stringify throws
 * on one, and a string or a double would not be the same JSON number).
 */
export function stringifyJson(value: unknown): string {
  const text = stringifyLossless(value);
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON representation`);
  return text;
}
