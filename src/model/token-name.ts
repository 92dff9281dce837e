/**
 * A stored token's name: how an operator finds, lists and revokes it (the CLI, GET /tokens), so one line
 * of text short enough for a table, that reads as what it is. The same rule whether the token is made by
 * the CLI or over the API.
 */

/** At most this many characters (Unicode code points, as JSON Schema's maxLength counts them). */
export const TOKEN_NAME_MAX = 64;

/**
 * A character that shows as itself: not a control character (Cc: C0, DEL, C1: line breaks, tabs,
 * escapes), not a format character (Cf: bidi controls such as U+202E and U+2066–U+2069, U+061C,
 * zero-width characters such as U+200B, U+200D and U+FEFF, the soft hyphen), not a separator (Z: U+00A0
 * and the other spaces, U+2028, U+2029), not an unpaired surrogate (Cs, which not every database stores).
 */
const SHOWN = '[^\\p{Cc}\\p{Cf}\\p{Cs}\\p{Z}]';

/**
 * Characters that show as themselves, and plain spaces between them (none at either end): so that
 * "initial\u00A0", "initial " or "deploy\u202Egnp.exe" cannot sit in a list beside the name it mimics.
 */
export const TOKEN_NAME_PATTERN = `^${SHOWN}(?:(?:${SHOWN}| )*${SHOWN})?$`;
const NAME_PATTERN = new RegExp(TOKEN_NAME_PATTERN, 'u');

/** What the pattern refuses, in words (the API's 400, the CLI's usage error). */
export const TOKEN_NAME_RULE =
  'must not contain control characters (line breaks, tabs…), invisible or direction-changing characters (zero-width, bidi controls), ' +
  'spaces other than the plain space, or a space at either end';

/** Whether `name` can name a token: 1 to TOKEN_NAME_MAX characters, each one that shows as itself. */
export function isTokenName(name: string): boolean {
  const length = [...name].length;
  return length >= 1 && length <= TOKEN_NAME_MAX && NAME_PATTERN.test(name);
}
