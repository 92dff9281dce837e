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
export async function signIn(token: string, onRefused: (message: string) => void): Promise<Session | string> {
  let signedIn = false;
  const client = clientFor(token, (message) => {
    if (signedIn) onRefused(message);
  });
  try {
    const { data, error, response } = await client.GET('/token');
    if (error !== undefined) {
      if (response.status === 401) return `This token was not accepted: ${error.message}. Check it, or ask for a new one.`;
      return explain(error);
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
    return unreachable(error);
  }
}
