import { createServer, type Server, type ServerResponse } from 'node:http';
import type { after } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload, type KeyObject } from 'jose';

/** The issuer and audience the tests' identity provider and service agree on. */
export const ISSUER = 'https://id.example/';
export const AUDIENCE = 'plant-store';

/** A signing key of the identity provider: its private half signs, its public JWK is published. */
export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export async function signingKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

/** Seconds since the epoch, as JWT claims count time. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A token as the identity provider issues one: this issuer and audience, an hour to live, unless `claims` say otherwise (undefined removes a claim). */
export async function mint(
  key: { privateKey: CryptoKey | KeyObject | Uint8Array; alg: string; kid?: string },
  claims: JWTPayload = {},
): Promise<string> {
  const payload: JWTPayload = { iss: ISSUER, aud: AUDIENCE, sub: 'user-1', iat: nowSeconds(), exp: nowSeconds() + 3600, ...claims };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, typ: 'JWT', ...(key.kid === undefined ? {} : { kid: key.kid }) })
    .sign(key.privateKey);
}

/** An unsigned token (`alg: none`) with the right claims: what an attacker would send. */
export function unsigned(claims: JWTPayload = {}): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const payload = { iss: ISSUER, aud: AUDIENCE, sub: 'user-1', exp: nowSeconds() + 3600, scope: 'plants:read plants:write', ...claims };
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(payload)}.`;
}

/**
 * The identity provider's JWKS endpoint on loopback (node:http): publishes `keys`, counts its fetches,
 * and can be told to hang (accept and never answer), fail, or answer as `answer` does.
 */
export class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  mode: 'serve' | 'hang' | 'fail' = 'serve';
  /** When set, answers every fetch instead. */
  answer: ((response: ServerResponse) => void) | undefined;
  private readonly server: Server = createServer((request, response) => {
    this.fetches++;
    if (this.answer) return this.answer(response);
    if (this.mode === 'hang') return;
    if (this.mode === 'fail') return void response.writeHead(500).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: this.keys }));
  });

  static async start(cleanup: typeof after, keys: SigningKey[] = []): Promise<JwksServer> {
    const jwks = new JwksServer();
    jwks.keys = keys.map((key) => key.jwk);
    await new Promise<void>((resolve) => jwks.server.listen(0, '127.0.0.1', resolve));
    cleanup(() => jwks.stop());
    return jwks;
  }

  get url(): string {
    const { port } = this.server.address() as { port: number };
    return `http://127.0.0.1:${port}/.well-known/jwks.json`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
