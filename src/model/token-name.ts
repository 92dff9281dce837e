/**
 * A stored token's name: how an operator finds, lists and revokes it (the CLI, GET /tokens), so one line
 * of text short enough for a table. The same rule whether the token is made by the CLI or over the API.
 */

/** At most this many characters (Unicode code points, as JSON Schema's maxLength counts them). */
export const TOKEN_NAME_MAX = 64;

/** No control character (C0, DEL, C1: line breaks, tabs, escapes) and no unpaired surrogate, which not every database stores. */
export const TOKEN_NAME_PATTERN = '^[^\\p{Cc}\\p{Cs}]*$';
const NAME_PATTERN = new RegExp(TOKEN_NAME_PATTERN, 'u');

/** Whether `name` can name a token: 1 to TOKEN_NAME_MAX characters, none of them a control character. */
export function isTokenName(name: string): boolean {
  const length = [...name].length;
  return length >= 1 && length <= TOKEN_NAME_MAX && NAME_PATTERN.test(name);
}
