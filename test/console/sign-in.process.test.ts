import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page, Route } from 'playwright-core';
import { createToken } from '../../src/auth/tokens.js';
import { browserSkip } from '../chromium.js';
import { TOKEN } from '../helpers.js';
import { openConsole, signIn, type PageWindow } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's sign-in browser tests", browserSkip);

/** What the page keeps in its storage and cookies, and its address. */
async function kept(page: Page) {
  const inPage = await page.evaluate(() => {
    const { sessionStorage, localStorage, document } = globalThis as unknown as PageWindow;
    return {
      session: sessionStorage.length === 0 ? {} : { 'plant-store.token': sessionStorage.getItem('plant-store.token') },
      sessionKeys: sessionStorage.length,
      local: localStorage.length,
      cookies: document.cookie,
    };
  });
  return { url: page.url(), ...inPage };
}

describe('the console: signing in and out', { skip, timeout: 180_000 }, () => {
  it('GET / leads to it; a wrong token is told so in words; the right one signs in and lives in sessionStorage only; Sign out forgets it', async () => {
    const { page, origin, requests, errors } = await openConsole(after, { path: '/' });
    assert.equal(page.url(), `${origin}/console`);
    assert.equal(await page.title(), 'Plant Store console');

    await page.getByLabel('Token').fill('ps_not-the-right-token-0123456789abcdefghij');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    assert.equal(await refusal.innerText(), 'This token was not accepted: unknown or revoked bearer token. Check it, or ask for a new one.');
    assert.equal((await kept(page)).sessionKeys, 0, 'a refused token is not kept');

    await signIn(page, TOKEN);
    const stored = await kept(page);
    assert.deepEqual(stored.session, { 'plant-store.token': TOKEN });
    assert.equal(stored.sessionKeys, 1);
    assert.equal(stored.local, 0);
    assert.equal(stored.cookies, '');
    for (const url of [...requests, stored.url]) assert.ok(!url.includes(TOKEN), `the token in a URL: ${url}`);

    // A reload keeps the session (the tab's sessionStorage), checked again with the service.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByText('No plants found.').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token').waitFor();
    assert.equal((await kept(page)).sessionKeys, 0);
    await page.reload();
    await page.getByLabel('Token').waitFor();
    for (const url of requests) assert.ok(!url.includes(TOKEN), `the token in a URL: ${url}`);
    assert.deepEqual(errors(), []);
  });

  it('signs out, saying why, when the token is revoked while signed in', async () => {
    const { t, page, errors } = await openConsole(after);
    const { secret, record } = await createToken(t.store.tokens, 'revoked-while-signed-in', ['plants:read']);
    await signIn(page, secret);
    assert.equal(await t.store.tokens.revoke(record.id), true);
    // The service trusts a valid token up to TOKEN_CACHE_MS: ask until it refuses.
    await until(async () => {
      if (await page.getByLabel('Token').isVisible()) return true;
      await page.getByRole('button', { name: 'Search' }).click();
      return false;
    }, 'the sign-in form after the revocation');
    const said = await page.getByRole('status').first().innerText();
    assert.equal(said, 'Signed out: the service no longer accepts this token (unknown or revoked bearer token).');
    assert.equal((await kept(page)).sessionKeys, 0);
    assert.deepEqual(errors(), []);
  });

  it("shows what the token's scopes do not allow as unavailable, up front", async () => {
    const { t, page, answers, errors } = await openConsole(after);
    await signIn(page, await t.tokenWith('plants:read'));
    await page.getByRole('table').or(page.getByText('No plants found.')).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New plant' }).isDisabled(), true);
    await page
      .getByText('Unavailable: Adding, editing, deleting and importing plants needs the scope plants:write, which this token does not have.')
      .waitFor();
    assert.equal(await page.getByRole('button', { name: 'Import' }).count(), 0);
    await page.getByText('Live updates unavailable').waitFor();

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('Unavailable: Managing webhooks needs the scope webhooks:manage, which this token does not have.').waitFor();
    await page.getByRole('link', { name: 'Changes' }).click();
    await page.getByText('Unavailable: Following the changes needs the scope events:read, which this token does not have.').waitFor();
    await page.getByRole('link', { name: 'About' }).click();
    await page.getByText(/with the scopes plants:read$/).waitFor();

    // And a token that may not read plants at all.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, await t.tokenWith('webhooks:manage'));
    await page.getByRole('link', { name: 'Plants' }).click();
    await page.getByText('Unavailable: Reading plants needs the scope plants:read, which this token does not have.').waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Add endpoint' }).waitFor();
    // Nothing was asked that the scopes refuse: no 403 anywhere, so no error shown later.
    assert.deepEqual(
      answers.filter((answer) => answer.startsWith('403')),
      [],
    );
    assert.deepEqual(errors(), []);
  });

  it('a refusal answered late to a session signed out of signs no later session out', async () => {
    const { t, page, errors } = await openConsole(after);
    const { secret: first, record } = await createToken(t.store.tokens, 'first', ['plants:read']);
    await signIn(page, first);
    await page.getByText('No plants found.').waitFor();
    // The first session's next search is held on its way, while the tab signs out and in with another token.
    let held: Route | undefined;
    await page.route(
      (url) => url.pathname === '/plants',
      (route) => {
        if (held === undefined) held = route;
        else void route.continue();
      },
    );
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => held !== undefined, 'the search held');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, TOKEN);
    // The first token revoked, the held search goes on: the service refuses it (401), to a session ended.
    assert.equal(await t.store.tokens.revoke(record.id), true);
    await until(async () => (await t.call('GET', '/plants', { token: first })).statusCode === 401, 'the first token refused');
    const refused = page.waitForResponse((response) => response.status() === 401);
    await held!.continue();
    await refused;
    // A round trip of the session signed in after it: the refusal has been read by then.
    const searched = page.waitForResponse((response) => new URL(response.url()).pathname === '/plants' && response.status() === 200);
    await page.getByRole('button', { name: 'Search' }).click();
    await searched;
    await page.getByText('No plants found.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).isVisible(), true, 'still signed in');
    assert.deepEqual((await kept(page)).session, { 'plant-store.token': TOKEN });
    assert.deepEqual(errors(), []);
  });

  it('a reload the service cannot answer (429, 503, no answer) keeps the token, to try again; only a refused token (401) signs out', async () => {
    const { t, page, errors } = await openConsole(after);
    await signIn(page, TOKEN);
    await page.getByText('No plants found.').waitFor();
    // GET /token, which a reload asks first, answered as a busy or failing service would, then not at all.
    const answers: Array<(route: Route) => Promise<void>> = [
      (route) => route.fulfill({ status: 429, json: { error: 429, code: 'rate_limited', message: 'too many requests; retry in 35 s' } }),
      (route) => route.fulfill({ status: 503, json: { error: 503, code: 'store_unavailable', message: 'the store cannot be reached' } }),
      (route) => route.abort('connectionrefused'),
    ];
    await page.route(
      (url) => url.pathname === '/token',
      (route) => (answers.shift() ?? ((later: Route) => later.continue()))(route),
    );
    await page.reload();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'Your token could not be checked: Refused (HTTP 429): too many requests; retry in 35 s.' }).waitFor();
    assert.deepEqual((await kept(page)).session, { 'plant-store.token': TOKEN }, 'kept after a 429');
    await page.getByRole('button', { name: 'Try again' }).click();
    await alert.filter({ hasText: 'Your token could not be checked: The service failed (HTTP 503): the store cannot be reached.' }).waitFor();
    await page.reload();
    await alert.filter({ hasText: 'Your token could not be checked: The service did not answer' }).waitFor();
    assert.deepEqual((await kept(page)).session, { 'plant-store.token': TOKEN }, 'kept after no answer');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByText('No plants found.').waitFor();

    // Refused (revoked): signed out, the token forgotten.
    const { secret, record } = await createToken(t.store.tokens, 'revoked at the reload', ['plants:read']);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, secret);
    assert.equal(await t.store.tokens.revoke(record.id), true);
    await until(async () => (await t.call('GET', '/plants', { token: secret })).statusCode === 401, 'the token refused');
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'This token was not accepted: unknown or revoked bearer token.' }).waitFor();
    await page.getByLabel('Token').waitFor();
    assert.equal((await kept(page)).sessionKeys, 0, 'a refused token is forgotten');
    assert.deepEqual(errors(), []);
  });

  it('a pasted token holding a character no token has (a zero-width space, a dash) is told so, naming it, and never sent', async () => {
    const { page, requests, errors } = await openConsole(after);
    for (const [token, named] of [
      ['ps_KQEkbgU\u200bzGM0123456789abcdefghijklmnop', 'U+200B, character 11'],
      ['static\u2014console-hunt-token-0123456789abcdef', 'U+2014, character 7'],
      ['ps_a b0123456789abcdefghijklmnopqrstuvwxyz', 'U+0020, character 5'],
    ]) {
      await page.getByLabel('Token').fill(token!);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: `This token was not accepted: it holds a character no token has (${named}). Check it, or ask for a new one.` })
        .waitFor();
    }
    assert.deepEqual(
      requests.filter((url) => new URL(url).pathname === '/token'),
      [],
      'nothing sent',
    );
    assert.equal((await kept(page)).sessionKeys, 0);
    assert.deepEqual(errors(), []);
  });
});
