import { redactUrl } from '../store/database-url.js';
import { UsageError, type Given, type OptionSpec } from './command.js';

/**
 * The service a command reaches through its API (--url), and the token it sends: read from the command's
 * options and the environment, checked before anything is sent (api.ts then makes the calls).
 */

/** The environment variable that names the service when --url does not. */
export const URL_VARIABLE = 'PLANT_STORE_URL';
/** The environment variable that holds the bearer token for the service. */
export const TOKEN_VARIABLE = 'PLANT_STORE_TOKEN';

/** The option every command that can reach a service declares. */
export const URL_OPTION: OptionSpec = {
  type: 'string',
  value: 'URL',
  help: `work through the service at this http(s) URL, not the store (default: ${URL_VARIABLE})`,
};

/** The service a command reaches, and the token it sends. */
export interface ApiTarget {
  /** The base URL, without a trailing slash: http://host:8080, or https://host/prefix behind a proxy. */
  url: string;
  token: string;
}

/**
 * The service the command is to reach: --url, else PLANT_STORE_URL (empty counts as unset); undefined when
 * neither is given, and the command works on the store. A URL that cannot be one, or a missing token, is a
 * mistake of use naming the option or variable to fix. `needs` says what the token must allow, for that message.
 */
export function apiTarget(given: Given, needs: string): ApiTarget | undefined {
  const option = given.string('url');
  const from = option !== undefined ? '--url' : URL_VARIABLE;
  const text = option ?? (process.env[URL_VARIABLE] || undefined);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${from} must be the service's http(s) URL, such as http://127.0.0.1:8080, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${from} must be an http or https URL, got "${redactUrl(text)}"`);
  if (url.username !== '' || url.password !== '') throw new UsageError(`${from} must not hold credentials: the token goes in ${TOKEN_VARIABLE}`);
  if (url.search !== '' || url.hash !== '')
    throw new UsageError(`${from} must be the service's address alone, without a query or fragment, got "${text}"`);
  const token = process.env[TOKEN_VARIABLE];
  if (!token) throw new UsageError(`${from} needs a token: set the environment variable ${TOKEN_VARIABLE} to a token of the service (${needs})`);
  const malformed = tokenFault(token);
  if (malformed !== undefined) throw new UsageError(`${TOKEN_VARIABLE} is malformed: ${malformed}`);
  return { url: url.href.replace(/\/+$/, ''), token };
}

/** A bearer token's characters (RFC 6750's b64token): letters, digits, -._~+/ and = at the end, as the service reads them (http/auth.ts). */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * What is wrong with a token that cannot be one, in words that never show it (a secret goes to no message,
 * nor half of one): where its first wrong character is, and what kind. Undefined for a well-formed token.
 */
function tokenFault(token: string): string | undefined {
  if (B64TOKEN.test(token)) return undefined;
  const chars = [...token];
  const at = chars.findIndex((char, i) => !/[A-Za-z0-9\-._~+/=]/.test(char) || (char === '=' && chars.slice(i).some((c) => c !== '=')));
  const char = chars[at] ?? '';
  const kind =
    char === '\n' || char === '\r'
      ? 'a line break'
      : /\s/.test(char)
        ? 'white space'
        : /[\p{Cc}\p{Cf}]/u.test(char)
          ? 'a control character'
          : char.charCodeAt(0) > 0x7e
            ? 'a character outside ASCII'
            : char === '='
              ? 'an = before its end'
              : `the character ${JSON.stringify(char)}`;
  return (
    `it holds ${kind} (character ${at + 1} of ${chars.length}), where a token is one word of letters, digits and -._~+/= ` +
    '(two tokens pasted together, or a file read with its line end?); it is not shown here'
  );
}
