import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import type { Locator, Page, Request } from 'playwright-core';
import { DuplicateTokenNameError } from '../../src/store/store.js';
import { cannotGrant } from '../../src/tokens/rules.js';
import { AUDIENCE, ISSUER, nowSeconds } from '../auth/identity-provider.js';
import { browserSkip } from '../chromium.js';
import { TOKEN, type TestApp } from '../helpers.js';
import { openConsole, signIn, type ConsoleUnderTest } from './harness.js';
import { needs } from '../toolkit.js';

const skip = needs("the console's tokens browser tests (errors, retries, scopes)", browserSkip);

/** Every request to POST /tokens the page sends from now on. */
function tokenPosts(page: Page): Request[] {
  const posts: Request[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/tokens') posts.push(request);
  });
  return posts;
}

async function keyOf(request: Request): Promise<string | undefined> {
  return (await request.allHeaders())['idempotency-key'];
}

/** The stored tokens named `name` (active and revoked). */
async function named(t: TestApp, name: string): Promise<number> {
  return (await t.store.tokens.list()).filter((token) => token.name === name).length;
}

/** The Tokens view, its Create token form open. */
async function openForm(page: Page): Promise<Locator> {
  await page.getByRole('link', { name: 'Tokens' }).click();
  await page.getByRole('button', { name: 'Create token' }).click();
  return page.getByRole('dialog', { name: 'Create a token' });
}

function assertOnOrigin({ requests, origin, errors }: ConsoleUnderTest): void {
  for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
  assert.deepEqual(errors(), []);
}

describe('the console: tokens, refused and retried', { skip, timeout: 180_000 }, () => {
  it('shows the view as unavailable, saying why, to a token without tokens:manage, and asks nothing', async () => {
    const under = await openConsole(after);
    const { t, page, answers } = under;
    await signIn(page, await t.tokenWith('plants:read', 'plants:write', 'webhooks:manage', 'events:read'));
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
    await page.getByText('Unavailable: Managing tokens needs the scope tokens:manage, which this token does not have.').waitFor();
    await page.getByText('Tokens made before it existed do not have it').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create token' }).count(), 0);
    assert.equal(await page.getByRole('table').count(), 0);
    assert.deepEqual(
      answers.filter((answer) => / \/tokens\b/.test(answer)),
      [],
      'nothing asked of /tokens',
    );
    assertOnOrigin(under);
  });

  it('to a token holding tokens:manage alone, lists and revokes but offers no Create token, saying why', async () => {
    const under = await openConsole(after);
    const { t, page } = under;
    await t.tokenWith('plants:read');
    await signIn(page, await t.tokenWith('tokens:manage'));
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('table').waitFor();
    const create = page.getByRole('button', { name: 'Create token' });
    assert.equal(await create.isDisabled(), true);
    assert.match(await page.locator('#token-makes-none').innerText(), /holds tokens:manage alone, which makes no token/);
    assert.equal(await create.getAttribute('aria-describedby'), 'token-makes-none');
    assert.ok((await page.getByRole('button', { name: /^Revoke / }).count()) >= 1, 'revoking stays');
    assertOnOrigin(under);
  });

  it('shows the service’s refusals in its words: a name taken (409), a bad name or no scope (400), a scope not held (403)', async () => {
    const under = await openConsole(after);
    const { t, page } = under;
    await signIn(page, await t.tokenWith('plants:read', 'plants:write', 'tokens:manage'));
    const form = await openForm(page);
    const alert = form.getByRole('alert');
    const create = form.getByRole('button', { name: 'Create' });

    await form.getByLabel('Name').fill('reporting');
    await create.click();
    assert.equal(await alert.innerText(), 'Refused (HTTP 400): body.scopes must not be empty.');
    await form.getByLabel('Name').fill('x'.repeat(65));
    await form.getByRole('checkbox', { name: 'plants:read', exact: true }).check();
    await create.click();
    await alert.filter({ hasText: 'Refused (HTTP 400): body.name must be at most 64 characters long.' }).waitFor();

    await t.tokenWith('plants:read');
    const taken = (await t.store.tokens.list()).at(-1)!.name;
    await form.getByLabel('Name').fill(taken);
    await create.click();
    await alert.filter({ hasText: `Refused (HTTP 409): ${new DuplicateTokenNameError(taken).message}.` }).waitFor();

    // A scope the token does not hold: the form never offers it; sent all the same (the request changed on
    // its way), the service refuses it, and the form says so.
    assert.equal(await form.getByRole('checkbox', { name: 'webhooks:manage' }).count(), 0);
    await page.route(
      (url) => url.pathname === '/tokens',
      async (route) => {
        const body = route.request().postDataJSON() as { scopes: string[] } | null;
        if (route.request().method() !== 'POST' || body === null) return route.continue();
        await route.continue({ postData: JSON.stringify({ ...body, scopes: [...body.scopes, 'webhooks:manage'] }) });
      },
    );
    await form.getByLabel('Name').fill('granted too much');
    await create.click();
    await alert.filter({ hasText: `Refused (HTTP 403): ${cannotGrant(['webhooks:manage'])}.` }).waitFor();
    await page.unrouteAll();
    assert.equal(await named(t, 'granted too much'), 0);
    assert.equal(await named(t, 'reporting'), 0);
    assert.equal(await named(t, 'x'.repeat(65)), 0);

    // The dialog stayed open through it all, the form as filled: corrected, it makes the token.
    await form.getByLabel('Name').fill('reporting');
    await create.click();
    await page.getByRole('dialog', { name: 'Token created' }).getByLabel('Secret').waitFor();
    assert.equal(await named(t, 'reporting'), 1);
    assertOnOrigin(under);
  });

  it('makes one token of a double click, and of a retry after a lost answer (the same Idempotency-Key); a new submission has a new key', async () => {
    const under = await openConsole(after);
    const { t, page } = under;
    await signIn(page, TOKEN);
    const posts = tokenPosts(page);
    let form = await openForm(page);
    await form.getByLabel('Name').fill('twice');
    await form.getByRole('checkbox', { name: 'plants:read', exact: true }).check();
    await form.getByRole('button', { name: 'Create' }).dblclick();
    const shown = page.getByRole('dialog', { name: 'Token created' });
    await shown.getByLabel('Secret').waitFor();
    assert.equal(posts.length, 1);
    assert.equal(await named(t, 'twice'), 1);
    await shown.getByRole('button', { name: 'Done' }).click();

    // The answer is lost on its way back (the token made): Create again gets that token, and makes none.
    let firstSecret = '';
    await page.route(
      (url) => url.pathname === '/tokens',
      async (route) => {
        if (route.request().method() !== 'POST' || firstSecret !== '') return route.continue();
        const answer = await route.fetch();
        assert.equal(answer.status(), 201);
        firstSecret = ((await answer.json()) as { secret: string }).secret;
        await route.abort('connectionreset');
      },
    );
    form = await openForm(page);
    await form.getByLabel('Name').fill('retried');
    await form.getByRole('checkbox', { name: 'plants:write', exact: true }).check();
    await form.getByRole('button', { name: 'Create' }).click();
    await form.getByRole('alert').filter({ hasText: 'The service did not answer' }).waitFor();
    await form.getByText('Create again to find out').waitFor();
    assert.equal(await named(t, 'retried'), 1, 'made, its answer lost');
    await form.getByRole('button', { name: 'Create' }).click();
    const secret = await shown.getByLabel('Secret').inputValue();
    assert.equal(secret, firstSecret, 'the token made by the first attempt');
    assert.equal(await named(t, 'retried'), 1, 'and no second one');
    assert.equal((await (await posts.at(-1)!.response())!.allHeaders())['idempotent-replayed'], 'true');
    assert.equal(posts.length, 3);
    const [doubleClicked, lost, retry] = await Promise.all(posts.map(keyOf));
    assert.equal(lost, retry);
    assert.notEqual(doubleClicked, lost);
    await shown.getByRole('button', { name: 'Done' }).click();
    await page.unrouteAll();

    // The same name and scopes, in a new submission: a new key, done anew (refused: the name is taken).
    form = await openForm(page);
    await form.getByLabel('Name').fill('retried');
    await form.getByRole('checkbox', { name: 'plants:write', exact: true }).check();
    await form.getByRole('button', { name: 'Create' }).click();
    await form.getByRole('alert').filter({ hasText: 'Refused (HTTP 409)' }).waitFor();
    assert.equal(posts.length, 4);
    assert.notEqual(await keyOf(posts[3]!), lost);
    assertOnOrigin(under);
  });

  it('says which tokens are accepted but not listed (static tokens, JWTs), and the JWT signed in with', async () => {
    const secret = 'a-shared-secret-of-at-least-32-bytes!';
    const under = await openConsole(after, { config: { jwtSecret: secret, jwtIssuer: ISSUER, jwtAudience: AUDIENCE } });
    const { page } = under;
    const jwt = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'ana', exp: nowSeconds() + 3600, scope: 'plants:read tokens:manage' })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .sign(new TextEncoder().encode(secret));
    await signIn(page, jwt);
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByText('Static tokens and JWTs are also accepted; they are not managed here.').waitFor();
    await page.getByText('You are signed in with a JWT (jwt:https%3A//id.example/:sub:ana), which is not listed.').waitFor();
    await page.getByText('No tokens yet.').waitFor();
    await page.getByRole('button', { name: 'Create token' }).click();
    const form = page.getByRole('dialog', { name: 'Create a token' });
    assert.deepEqual(await form.getByRole('checkbox').count(), 2);
    await form.getByRole('checkbox', { name: 'tokens:manage', exact: true }).waitFor();
    await form.getByText('(not plants:write, webhooks:manage, events:read)').waitFor();
    assertOnOrigin(under);
  });
});
