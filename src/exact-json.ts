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

function parseNumber(text: string): number | bigint {
  return /^-?\d+$/.test(text) ? toPlantId(text) : Number(text);
}

export function parseJson(text: string): unknown {
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  // Duplicate keys: the last one wins, as with JSON.parse.
  return parseLossless(text, null, { parseNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/**
 * JSON text like JSON.stringify's, but a bigint is written as a plain JSON integer (JSON.stringify throws
 * on one, and a string or a double would not be the same JSON number).
 */
export function stringifyJson(value: unknown, space?: number): string {
  const text = stringifyLossless(value, undefined, space);
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON representation`);
  return text;
}
