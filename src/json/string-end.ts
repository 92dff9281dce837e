/**
 * Where a JSON string ends, for the two readers that step over strings whole: the exact parser (exact.ts)
 * and the int64 writer (int64-strings.ts). It imports nothing, as exact.ts does, so that both are copied
 * into the client package as they are (scripts/client-sources.mjs).
 */

const BACKSLASH = 0x5c;

/** The index of the quote that ends the string whose text starts at `from`, or -1 when none does. */
export function closingQuote(text: string, from: number): number {
  for (let at = text.indexOf('"', from); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}
