import type { Principal } from '../model/principal.js';
import type { Scope } from '../model/scopes.js';
import { andList } from '../words.js';

/**
 * What a token may do to tokens, and the messages that say why not (the answers', and the OpenAPI
 * document's examples).
 */

/**
 * The scopes asked for that the token making the new one lacks. A token grants only what it holds itself,
 * so `tokens:manage` cannot be used to climb to more.
 */
export function lackedScopes(maker: Principal, asked: readonly Scope[]): Scope[] {
  return asked.filter((scope) => !maker.scopes.includes(scope));
}

export function cannotGrant(lacked: readonly Scope[]): string {
  return `body.scopes asks for ${andList(lacked)}, which this token lacks: a token can grant only scopes it holds itself`;
}

/**
 * `tokens:manage` alone makes nothing: a token that holds no other scope makes no token at all, not even
 * another that only manages tokens. Such a token can list and revoke (to stop a leaked one), but a leaked
 * one cannot mint copies of itself that outlive its revocation.
 */
export function managesOnly(maker: Principal): boolean {
  return maker.scopes.every((scope) => scope === 'tokens:manage');
}

export const MANAGES_ONLY =
  'this token holds tokens:manage alone, which makes no token: a token makes tokens only when it holds a scope besides tokens:manage, and grants only scopes it holds itself';

/** The 404 of an id no stored token has; static tokens and JWTs are told apart by their ids' forms (nothing is looked up). */
export function notFound(id: string): string {
  if (id.startsWith('static:')) return `no stored token with id ${id}: a static token (PLANT_STORE_TOKENS) is configuration, not managed here`;
  if (id.startsWith('jwt:')) return `no stored token with id ${id}: a JWT's subject is managed by its identity provider, not here`;
  return `no token with id ${id}`;
}

export function revokedAlready(id: string, at: string | null): string {
  return at === null ? `token ${id} is revoked already` : `token ${id} is revoked already (since ${at})`;
}

/** The 409 of a token asked to revoke itself without `self=true`. */
export function revokingItself(id: string): string {
  return `token ${id} is the token of this request: send DELETE /tokens/${id}?self=true to revoke it all the same (this token then stops working within a second)`;
}

export const REVOKED_ALREADY_EXAMPLE = revokedAlready('3f9a1c07b2e4', '2026-01-31T12:00:00.000Z');
export const REVOKING_ITSELF_EXAMPLE = revokingItself('3f9a1c07b2e4');
