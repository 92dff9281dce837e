import { clientFor, explain, unreachable, type Client, type TokenInfo } from './api.js';

/**
 * The token lives in this tab's sessionStorage and nowhere else: not in localStorage, a cookie or a URL. It
 * is gone when the tab closes, and "Sign out" forgets it at once.
 */
const KEY = 'plant-store.token';

export interface Session {
  client: Client;
  info: TokenInfo;
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
      end: () => {
        signedIn = false;
      },
    };
  } catch (error) {
    return { problem: unreachable(error), refused: false };
  }
}

function notAccepted(why: string): SignInFailure {
  return { problem: `This token was not accepted: ${why}. Check it, or ask for a new one.`, refused: true };
}
