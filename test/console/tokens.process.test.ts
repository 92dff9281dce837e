import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { createToken } from '../../src/auth/tokens.js';
import { browserSkip } from '../chromium.js';
import { TOKEN } from '../helpers.js';
import { openConsole, rows, signIn, type ConsoleUnderTest, type PageWindow } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's tokens browser tests", browserSkip);

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Every request to POST /tokens the page sent. */
function tokenPosts(page: Page): Request[] {
  const posts: Request[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/tokens') posts.push(request);
  });
  return posts;
}

/** Everything the page keeps (storage, cookies, address) and shows (its HTML), as one text to search. */
async function keptAndShown(page: Page): Promise<string> {
  const kept = await page.evaluate(() => {
    const { sessionStorage, localStorage, document } = globalThis as unknown as PageWindow & {
      sessionStorage: { key(i: number): string | null };
      localStorage: { key(i: number): string | null; getItem(key: string): string | null };
    };
    const all: string[] = [document.cookie];
    for (let i = 0; i < sessionStorage.length; i++) all.push(sessionStorage.getItem(sessionStorage.key(i)!) ?? '');
    for (let i = 0; i < localStorage.length; i++) all.push(localStorage.getItem(localStorage.key(i)!) ?? '');
    return all.join('\n');
  });
  return `${page.url()}\n${kept}\n${await page.content()}`;
}

/** Opens the Tokens view by its link, and waits for its table. */
async function openTokens(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Tokens' }).click();
  await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
  await page.getByRole('table').waitFor();
}

/** The row of the token named `name`: its cells. */
async function rowOf(page: Page, name: string): Promise<string[] | undefined> {
  return (await rows(page)).map((row) => row.split(' | ')).find((cells) => cells[1] === name || cells[1] === `${name} signed in`);
}

/** A console signed in with a stored token with these scopes (and its id). */
async function signedInWith(cleanup: typeof after, scopes: Parameters<typeof createToken>[2]) {
  const under = await openConsole(cleanup);
  const { secret, record } = await createToken(under.t.store.tokens, 'admin', scopes);
  await signIn(under.page, secret);
  return { ...under, secret, id: record.id };
}

function assertOnOrigin({ requests, origin, errors }: ConsoleUnderTest): void {
  for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
  assert.deepEqual(errors(), []);
}

describe('the console: tokens', { skip, timeout: 180_000 }, () => {
  it('creates a token with the scopes it holds (an Idempotency-Key sent), shows its secret once with Copy, and never again', async () => {
    const under = await signedInWith(after, ['plants:read', 'plants:write', 'tokens:manage']);
    const { t, page } = under;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    const posts = tokenPosts(page);
    await openTokens(page);
    assert.match(page.url(), /#tokens$/);
    assert.equal(await page.title(), 'Tokens · Plant Store console');
    // The token signed in with is listed, marked; the static token of the test app is not, and said so.
    const [id, name, scopes, created, state, actions] = (await rowOf(page, 'admin'))!;
    assert.deepEqual(
      [id, name, scopes, state, actions],
      [under.id, 'admin signed in', 'plants:read, plants:write, tokens:manage', 'active', 'Revoke admin'],
    );
    assert.ok(created !== '—' && created!.length > 5, created);
    await page.getByText('Static tokens are also accepted; they are not managed here.').waitFor();
    assert.deepEqual(await page.getByRole('columnheader').allInnerTexts(), ['Id', 'Name', 'Scopes', 'Created', 'State', 'Actions']);

    // The form offers the scopes of the token signed in, and only them, saying why.
    await page.getByRole('button', { name: 'Create token' }).click();
    const form = page.getByRole('dialog', { name: 'Create a token' });
    await form.getByText('A token can grant only the scopes it holds itself').waitFor();
    await form.getByText('(not webhooks:manage, events:read)').waitFor();
    const offered = await form
      .getByRole('checkbox')
      .evaluateAll((boxes) => boxes.map((box) => (box as unknown as { labels: Array<{ textContent: string }> }).labels[0]!.textContent.trim()));
    assert.deepEqual(offered, ['plants:read', 'plants:write', 'tokens:manage']);
    for (const scope of offered) assert.equal(await form.getByRole('checkbox', { name: scope, exact: true }).isChecked(), false);
    await form.getByLabel('Name').fill('reporting');
    await form.getByRole('checkbox', { name: 'plants:read', exact: true }).check();
    await form.getByRole('button', { name: 'Create' }).click();

    // The secret, once, read-only, copied with its button: a working token with the scopes chosen.
    const shown = page.getByRole('dialog', { name: 'Token created' });
    const field = shown.getByLabel('Secret');
    const secret = await field.inputValue();
    assert.match(secret, /^ps_[A-Za-z0-9_-]{43}$/);
    assert.equal(await field.isEditable(), false);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    const clipboard = await page.evaluate(() =>
      (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
    );
    assert.equal(clipboard, secret);
    const made = (await t.call('GET', '/token', { token: secret })).json<{ id: string; scopes: string[] }>();
    assert.deepEqual(made.scopes, ['plants:read']);
    assert.equal((await t.call('GET', '/plants', { token: secret })).statusCode, 200);
    assert.equal(posts.length, 1);
    assert.match((await posts[0]!.allHeaders())['idempotency-key'] ?? '', UUID_V4);

    // Closed: gone from the page, and kept nowhere (not in storage, a cookie or the address).
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Created reporting.' }).waitFor();
    await until(async () => (await rowOf(page, 'reporting')) !== undefined, 'the new row');
    assert.deepEqual(
      (await rowOf(page, 'reporting'))!.filter((_, i) => i !== 3),
      [made.id, 'reporting', 'plants:read', 'active', 'Revoke reporting'],
    );
    assert.ok(!(await keptAndShown(page)).includes(secret));

    // A second token; its secret is gone after a reload, and after leaving the view, with the dialog open.
    for (const leave of ['reload', 'another view'] as const) {
      await page.getByRole('button', { name: 'Create token' }).click();
      await form.getByLabel('Name').fill(`ci ${leave}`);
      await form.getByRole('checkbox', { name: 'plants:write', exact: true }).check();
      await form.getByRole('button', { name: 'Create' }).click();
      const again = await field.inputValue();
      assert.match(again, /^ps_/);
      assert.notEqual(again, secret);
      if (leave === 'reload') await page.reload();
      else await page.evaluate(() => ((globalThis as unknown as { location: { hash: string } }).location.hash = '#about'));
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      if (leave === 'another view') await page.getByRole('heading', { level: 1, name: 'About' }).waitFor();
      await page.goto(`${page.url().split('#')[0]}#tokens`);
      await page.getByRole('table').waitFor();
      await until(async () => (await rowOf(page, `ci ${leave}`)) !== undefined, 'the row of the second token');
      assert.equal(await shown.count(), 0);
      assert.ok(!(await keptAndShown(page)).includes(again), `the secret after ${leave}`);
    }
    // Each submission its own key.
    const keys = await Promise.all(posts.map(async (post) => (await post.allHeaders())['idempotency-key']));
    assert.equal(new Set(keys).size, 3, keys.join(', '));
    assertOnOrigin(under);
  });

  it('revokes a token after asking (Cancel leaves it), shows it revoked and filters by state', async () => {
    const under = await signedInWith(after, ['plants:read', 'tokens:manage']);
    const { t, page, answers } = under;
    const { secret, record } = await createToken(t.store.tokens, 'reporting', ['plants:read']);
    await openTokens(page);
    await until(async () => (await rowOf(page, 'reporting')) !== undefined, 'the row');

    await page.getByRole('button', { name: 'Revoke reporting', exact: true }).click();
    const ask = page.getByRole('dialog', { name: 'Revoke the token reporting?' });
    await ask.getByText('stops working within a second').waitFor();
    assert.equal(await ask.getByText('this is the token you are signed in with').count(), 0);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    assert.equal((await t.call('GET', `/tokens/${record.id}`)).json().revokedAt, null, 'Cancel revokes nothing');
    assert.ok(!answers.some((answer) => answer.startsWith('204 DELETE')));

    await page.getByRole('button', { name: 'Revoke reporting', exact: true }).click();
    await ask.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked reporting.' }).waitFor();
    assert.ok(answers.includes(`204 DELETE /tokens/${record.id}`), answers.join('\n'));
    assert.ok(!under.requests.some((url) => url.includes('self=')), 'another token is revoked without self=true');
    await until(async () => (await rowOf(page, 'reporting'))?.[4]?.startsWith('revoked at ') === true, 'the row revoked');
    assert.equal(await page.getByRole('button', { name: 'Revoke reporting', exact: true }).count(), 0);
    assert.notEqual((await t.call('GET', `/tokens/${record.id}`)).json().revokedAt, null);
    await until(async () => (await t.call('GET', '/plants', { token: secret })).statusCode === 401, 'the revoked token refused');

    // Shown with the active ones, or on its own.
    const show = page.getByRole('combobox', { name: 'Show' });
    await show.selectOption({ label: 'Revoked only' });
    await until(async () => (await rows(page)).length === 1 && (await rowOf(page, 'reporting')) !== undefined, 'the revoked alone');
    await show.selectOption({ label: 'Active only' });
    await until(async () => (await rowOf(page, 'reporting')) === undefined && (await rowOf(page, 'admin')) !== undefined, 'the active alone');
    await show.selectOption({ label: 'Active and revoked' });
    await until(async () => (await rows(page)).length === 2, 'both');
    assertOnOrigin(under);
  });

  it('revokes the token signed in with only when the question said so, with self=true, and signs out', async () => {
    const under = await signedInWith(after, ['plants:read', 'events:read', 'tokens:manage']);
    const { t, page, secret, id, requests } = under;
    await openTokens(page);
    await page.getByRole('button', { name: 'Revoke admin', exact: true }).click();
    const ask = page.getByRole('dialog', { name: 'Revoke the token admin?' });
    await ask.getByText('This is the token you are signed in with; you will be signed out.').waitFor();
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    assert.equal((await t.call('GET', `/tokens/${id}`)).json().revokedAt, null);

    await page.getByRole('button', { name: 'Revoke admin', exact: true }).click();
    await ask.getByRole('button', { name: 'Revoke and sign out' }).click();
    await page.getByLabel('Token', { exact: true }).waitFor();
    assert.equal(await page.getByRole('status').first().innerText(), 'Signed out: you revoked the token you were signed in with (admin).');
    assert.ok(
      requests.some((url) => new URL(url).pathname === `/tokens/${id}` && new URL(url).search === '?self=true'),
      requests.join('\n'),
    );
    assert.notEqual((await t.call('GET', `/tokens/${id}`)).json().revokedAt, null);
    const kept = await page.evaluate(() => (globalThis as unknown as PageWindow).sessionStorage.length);
    assert.equal(kept, 0, 'the token is forgotten');
    await until(async () => (await t.call('GET', '/token', { token: secret })).statusCode === 401, 'the token refused');
    // A reload stays signed out.
    await page.reload();
    await page.getByLabel('Token', { exact: true }).waitFor();
    assertOnOrigin(under);
  });

  it('pages through more tokens than a page holds; the view is in the address (#tokens): reload, Back', async () => {
    const under = await openConsole(after);
    const { t, page } = under;
    const names = Array.from({ length: 30 }, (_, i) => `token ${String(i + 1).padStart(2, '0')}`);
    for (const name of names) await createToken(t.store.tokens, name, ['plants:read']);
    // The service's order (oldest first; tokens made in the same millisecond in another order of their own).
    const listed = (await t.call('GET', '/tokens')).json<Array<{ name: string }>>().map((token) => token.name);
    assert.deepEqual([...listed].sort(), names);
    await signIn(page, TOKEN);
    await openTokens(page);
    const shownNames = async () => (await rows(page)).map((row) => row.split(' | ')[1]);
    await until(async () => (await rows(page)).length === 25, 'a page of 25');
    assert.deepEqual(await shownNames(), listed.slice(0, 25));
    await page.getByRole('button', { name: 'Next page' }).click();
    await until(async () => (await rows(page)).length === 5, 'the second page');
    assert.deepEqual(await shownNames(), listed.slice(25));
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    await page.getByText('Page 2').waitFor();
    await page.getByRole('button', { name: 'Previous page' }).click();
    await until(async () => (await rows(page)).length === 25, 'the first page again');
    assert.equal(await page.getByRole('button', { name: 'Previous page' }).isDisabled(), true);

    // In the address: a reload shows the Tokens view, Back the view before.
    assert.match(page.url(), /\/console#tokens$/);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
    await page.getByRole('table').waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Plants' }).waitFor();
    await page.goForward();
    await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Tokens' }).getAttribute('aria-current'), 'page');
    assertOnOrigin(under);
  });
});
