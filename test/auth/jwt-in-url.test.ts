import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { JWTPayload } from 'jose';
import { TOKEN_IN_URL_REFUSED } from '../../src/http/auth.js';
import { assertError, testApp } from '../helpers.js';
import { AUDIENCE, ISSUER, JwksServer, mint, signingKey } from './identity-provider.js';

/**
 * A JWT as access_token (GET /events in the URL): taken only when its claims as sent grant nothing but
 * events:read here. A leaked URL must not carry a token good at the identity provider (`openid`) or at
 * another service (its scopes, its audience), even though this service ignores those names.
 */

describe('a JWT sent as access_token in the URL', async () => {
  const key = await signingKey('key-a');
  const jwks = await JwksServer.start(after, [key]);
  const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, jwtIssuer: ISSUER, jwtAudience: AUDIENCE } });
  const inUrl = async (claims: JWTPayload) => t.call('GET', `/events?access_token=${await mint(key, claims)}`, { token: null });

  it('is taken when scope or scp grant events:read alone, for this audience alone', async () => {
    for (const claims of [{ scope: 'events:read' }, { scp: ['events:read'] }, { scope: 'events:read', aud: [AUDIENCE] }]) {
      const res = await inUrl(claims);
      assert.equal(res.statusCode, 200, `${JSON.stringify(claims)}: ${res.payload}`);
    }
  });

  it('is refused 403 when it also grants scopes this service does not know, or names another audience', async () => {
    for (const claims of [
      { scope: 'events:read openid profile email offline_access' },
      { scope: 'events:read billing:write' },
      { scope: 'events:read', scp: ['admin:all'] },
      { scope: 'events:read', aud: [AUDIENCE, 'https://billing.example'] },
      { scope: 'events:read plants:read' },
    ]) {
      assertError(await inUrl(claims), 403, TOKEN_IN_URL_REFUSED, 'token_in_url_refused');
    }
  });

  it('the same tokens still work in the Authorization header', async () => {
    const token = await mint(key, { scope: 'events:read openid', aud: [AUDIENCE, 'https://billing.example'] });
    assert.equal((await t.call('GET', '/events', { token })).statusCode, 200);
  });
});
