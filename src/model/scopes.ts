/** What a token may do. Every route names the one scope it needs (or none: public). */
export const SCOPES = ['plants:read', 'plants:write', 'webhooks:manage', 'events:read', 'tokens:manage'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes `token create` grants when none is named: the plant scopes, not webhook or token management. */
export const DEFAULT_TOKEN_SCOPES: readonly Scope[] = ['plants:read', 'plants:write'];

export function isScope(name: string): name is Scope {
  return (SCOPES as readonly string[]).includes(name);
}

/** Scopes from text such as `plants:read plants:write` or `plants:read,plants:write`; an unknown name is an error. */
export function parseScopes(text: string): Scope[] {
  const scopes = text.split(/[\s,]+/).filter((s) => s !== '');
  for (const scope of scopes) {
    if (!isScope(scope)) throw new Error(`unknown scope "${scope}": the scopes are ${SCOPES.join(', ')}`);
  }
  return [...new Set(scopes)] as Scope[];
}
