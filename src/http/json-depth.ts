/**
 * Arrays and objects nested deeper than this are refused in request bodies and import rows. The service's
 * documents need 2 levels (an endpoint's events list in its object), so 64 leaves room for any field a
 * client adds, while anything walking a parsed document recursively (validation, serialization) stays far
 * from the stack's end.
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
 * Throws a JsonDepthError when arrays and objects nest deeper than JSON_MAX_DEPTH, brackets inside strings
 * aside. Texts shorter than the limit, or with no more opening brackets than it, cannot (most bodies and
 * import rows stop there, without a scan).
 */
export function checkJsonDepth(text: string): void {
  if (text.length <= JSON_MAX_DEPTH || !moreThan(text, ['[', '{'], JSON_MAX_DEPTH)) return;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > JSON_MAX_DEPTH) throw new JsonDepthError();
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}
