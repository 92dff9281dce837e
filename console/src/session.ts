import { clientFor, explain, unreachable, type Client, type TokenInfo } from './api.js';
import { channelOf } from './shared-feed.js';

/**
 * The token lives in this tab's sessionStorage and nowhere else: not in localStorage, a cookie or a URL. It
 * is gone when the tab closes, and "Sign out" forgets it at once.
 */
const KEY = 'plant-store.token';

export interface Session {
  client: Client;
  info: TokenInfo;
  /** The channel on which the tabs signed in with this token share one change-feed stream (shared-feed.ts). */
  channel: string;
  /**
   * Ends the session: a refusal answered later to one of its requests (one still on its way when the user
   * signed out, or revoked this very token) no longer signs anyone out, not the session that follows either.
   */
  end: () => void;
}

/**
 * Why signing in failed, in words. `refused`: the service refused the token itself (401), so it is no good;
 * any other failure (429, a 5xx, no answer) says nothing of the token, which a reload then keeps.
 */
export interface SignInFailure {
  problem: string;
  refused: boolean;
}

export function savedToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}

/**
 * Asks the service what the token is (GET /token): its scopes, or why it is refused, in words. Kept in
 * sessionStorage only once accepted. `onRefused` is told when a later answer refuses it (revoked meanwhile).
 */
export async function signIn(token: string, onRefused: (message: string) => void): Promise<Session | SignInFailure> {
  const foreign = foreignCharacter(token);
  if (foreign !== undefined) return notAccepted(`it holds a character no token has (${foreign})`);
  let signedIn = false;
  const client = clientFor(token, (message) => {
    if (signedIn) onRefused(message);
  });
  try {
    const { data, error, response } = await client.GET('/token');
    if (error !== undefined) {
      if (response.status === 401) return notAccepted(error.message);
      return { problem: explain(error), refused: false };
    }
    sessionStorage.setItem(KEY, token);
    signedIn = true;
    return {
      client,
      info: data,
      channel: channelOf(token),
      end: () => {
        signedIn = false;
      },
    };
  } catch (error) {
    return { problem: unreachable(error), refused: false };
  }
}

/**
 * The first character of `token` that no token of the service has, by code point and place ("U+200B,
 * character 11"), or undefined. Every token is an RFC 6750 b64token (static ones are checked so at start,
 * `ps_` tokens and JWTs are made of them): a zero-width space or a dash a word processor put in a pasted
 * token cannot be sent (fetch refuses a header with a character beyond Latin-1) nor accepted, and the person
 * is told of the token, not of a service that was never asked.
 */
function foreignCharacter(token: string): string | undefined {
  let place = 0;
  for (const character of token) {
    place++;
    if (!/^[A-Za-z0-9\-._~+/=]$/.test(character)) {
      const code = character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      return `U+${code}, character ${place}`;
    }
  }
  return undefined;
}

function notAccepted(why: string): SignInFailure {
  return { problem: `This token was not accepted: ${why}. Check it, or ask for a new one.`, refused: true };
}
