import { isUtf8 } from 'node:buffer';
import { parse as parseLossless } from 'lossless-json';

/**
 * JSON with exact 64-bit integers. JSON.parse turns every number into a double, which loses digits
 * past 2^53. A number of 15 digits or fewer always fits, so only a text with a run of 16 or more
 * digits can lose any; every other text takes the fast path through JSON.parse unchanged. The slow
 * path keeps integers that do not fit a double as bigint.
 */
const LONG_DIGIT_RUN = /\d{16}/;
const INTEGER = /^-?\d+$/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function parseNumber(text: string): number | bigint {
  if (!INTEGER.test(text)) return Number(text);
  const value = BigInt(text);
  return value <= MAX_SAFE && value >= -MAX_SAFE ? Number(value) : value;
}

export function parseJson(text: string): unknown {
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  // Duplicate keys: the last one wins, as with JSON.parse.
  return parseLossless(text, null, { parseNumber, onDuplicateKey: ({ newValue }) => newValue });
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** True for a value parseJson gave for a JSON integer that fits int64 exactly. */
export function isInt64(value: unknown): value is number | bigint {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

const INT64_TEXT = /^-?(0|[1-9]\d{0,18})$/;

/** The int64 a path or query parameter spells in decimal, or undefined when it spells none. */
export function parseInt64(text: string): number | bigint | undefined {
  if (!INT64_TEXT.test(text)) return undefined;
  if (text.length < 16) return Number(text);
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) return undefined;
  return value <= MAX_SAFE && value >= -MAX_SAFE ? Number(value) : value;
}

/** A `\uD800`–`\uDFFF` escape: the only way a lone surrogate can enter text that is valid UTF-8. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A request body that is not what RFC 8259 calls JSON text: not UTF-8, or a string no UTF-8 can hold. */
export class JsonBodyError extends Error {}

/** True when some string (value or key) of a parsed document holds a lone surrogate. Iterative: documents may nest deeply. */
function hasLoneSurrogate(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) pending.push(key, item);
    }
  }
  return false;
}

/**
 * A request body as JSON. It must be UTF-8: a byte sequence that is not would otherwise be stored as
 * U+FFFD, a change the client never sent. Nor may a string escape a lone surrogate (`"\ud800"`):
 * stored as UTF-8 it would come back as something else than what the answer acknowledged.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw new JsonBodyError('body is not valid UTF-8');
  const text = bytes.toString('utf8');
  const value = parseJson(text);
  if (SURROGATE_ESCAPE.test(text) && hasLoneSurrogate(value)) {
    throw new JsonBodyError('a string in the body holds an unpaired UTF-16 surrogate (\\ud800-\\udfff), which is not Unicode text');
  }
  return value;
}
