/**
 * Plant ids are 64-bit integers. The program holds one as a number when it is a safe integer (the
 * common case, cheap) and as a bigint beyond, so that no digit is ever lost to a double.
 */
export type PlantId = number | bigint;

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An integer, given exactly (as bigint or decimal text), as the program holds ids: number when safe, bigint beyond. */
export function toPlantId(value: bigint | string): PlantId {
  // Up to 15 digits is always a safe integer: no bigint needed.
  if (typeof value === 'string' && value.length <= 15) return Number(value);
  const big = typeof value === 'bigint' ? value : BigInt(value);
  return big <= MAX_SAFE && big >= -MAX_SAFE ? Number(big) : big;
}

/** True for an integer that fits int64 exactly, as JSON parsing gives it (number or bigint). */
export function isInt64(value: unknown): value is PlantId {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

// Plain decimal: no sign on zero (`-0` is another spelling of 0, as `+1` of 1 and `01` of 1).
const INT64_TEXT = /^(?:0|-?[1-9]\d{0,18})$/;

/** The int64 a path or query parameter spells in plain decimal, or undefined when it spells none. */
export function parseInt64(text: string): PlantId | undefined {
  if (!INT64_TEXT.test(text)) return undefined;
  if (text.length < 16) return Number(text);
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) return undefined;
  return toPlantId(value);
}
