import { createClient, type components, type ErrorBody, type PlantStoreClient } from '@plant-store/client';

/** The typed client, its types (ids exact: number | bigint), and what the console says of an answer that went wrong. */

export type Client = PlantStoreClient;
export type StoredPlant = components['schemas']['StoredPlant'];
export type TokenInfo = components['schemas']['TokenInfo'];
export type Scope = TokenInfo['scopes'][number];
export type Endpoint = components['schemas']['WebhookEndpoint'];
/** A stored token as GET /tokens lists it (never its secret). */
export type StoredToken = components['schemas']['Token'];
export type Id = number | bigint;
/** The event types, from the one list (the service's, copied into the client package by its build). */
export { EVENT_TYPES, type EventType } from '@plant-store/client';

/**
 * The service's root, from the page's own address: /console → the origin, /prefix/console → /prefix, so
 * that the console works behind a proxy that serves the service under a prefix. Never another origin.
 */
export function serviceRoot(): string {
  return new URL('.', location.href).href.replace(/\/$/, '');
}

/**
 * A client that sends the token in the Authorization header (never in a URL), and tells `onRefused` when
 * the service refuses the token itself (401: revoked meanwhile, or expired), so the console signs out.
 */
export function clientFor(token: string, onRefused: (message: string) => void): Client {
  const client = createClient({ baseUrl: serviceRoot(), headers: { Authorization: `Bearer ${token}` } });
  client.use({
    async onResponse({ response }) {
      if (response.status === 401) onRefused(await messageOf(response.clone()));
      return undefined;
    },
  });
  return client;
}

async function messageOf(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as Partial<ErrorBody>;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not the service's JSON (a proxy's page): the status says it.
  }
  return `${response.status} ${response.statusText}`;
}

/** An error answer in words, for a person: the service's own message (which names what was wrong), and the status. */
export function explain(error: ErrorBody): string {
  const what = error.error >= 500 ? 'The service failed' : 'Refused';
  return `${what} (HTTP ${error.error}): ${error.message.replace(/\.$/, '')}.`;
}

/** A request that got no answer at all (the service is down, or the network). */
export function unreachable(error: unknown): string {
  if (error instanceof DOMException && error.name === 'AbortError') return 'Cancelled.';
  return `The service did not answer: ${error instanceof Error ? error.message : String(error)}.`;
}

/** The `cursor` of the Link header's rel="next" URL (RFC 8288), or undefined on the last page: every list pages so. */
export function nextLink(response: Response): string | undefined {
  const header = response.headers.get('link');
  if (header === null) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (match && /;\s*rel="?next"?/i.test(match[2]!)) return new URL(match[1]!, location.href).searchParams.get('cursor') ?? undefined;
  }
  return undefined;
}

/**
 * An id typed by a person, as the client sends it: a number when it is a safe integer, a bigint beyond
 * 2^53 (exact), or the text itself when it is no whole number, so that the service says what is wrong.
 */
export function parseId(text: string): Id {
  const trimmed = text.trim();
  if (!/^-?\d+$/.test(trimmed)) return trimmed as unknown as Id;
  const value = BigInt(trimmed);
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

export function hasScope(info: TokenInfo, scope: Scope): boolean {
  return info.scopes.includes(scope);
}

/** The sentence shown where the token's scopes do not allow something. */
export function lacking(scope: Scope, what: string): string {
  return `Unavailable: ${what} needs the scope ${scope}, which this token does not have.`;
}
