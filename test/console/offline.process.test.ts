import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { VERSION } from '../../src/version.js';
import { TOKEN } from '../helpers.js';
import { addPlants, openConsole, signIn, type PageWindow } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's offline, CSP and accessibility browser tests", browserSkip);

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core run in the page (injected through the browser's debugging protocol, which the page's CSP does not
 * govern): the violations found, with the elements each concerns.
 */
async function axeViolations(page: Page): Promise<Violation[]> {
  // Once a page: evaluated again at every check (some 90 of them), its half a megabyte took half of the test's time.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axe.source);
  return page.evaluate(async () => {
    const { axe: inPage } = globalThis as unknown as { axe: typeof axe };
    const results = await inPage.run({ resultTypes: ['violations'] });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.map((n) => String(n.target.join(' '))),
    }));
  });
}

/** No serious or critical violation; the others are listed as the test's diagnostics. */
async function assertAccessible(page: Page, where: string, diagnostic: (text: string) => void): Promise<void> {
  const found = await axeViolations(page);
  for (const v of found) diagnostic(`${where}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(', ')}`);
  assert.deepEqual(
    found.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
    [],
    where,
  );
}

/** The page is no wider than the window: nothing to scroll sideways (tables scroll inside their own box). */
async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const { documentElement } = (globalThis as unknown as PageWindow).document;
    return documentElement.scrollWidth <= documentElement.clientWidth;
  });
}

/** The Webhooks view's dialogs: adding an endpoint (with strings chosen for ids), and the question before switching them. */
async function webhookDialogs(page: Page, at: string, diagnostic: (text: string) => void): Promise<void> {
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const form = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
  await form.getByRole('radio', { name: 'Strings, for JavaScript receivers' }).check();
  await assertAccessible(page, `Add a webhook endpoint at ${at}`, diagnostic);
  assert.ok(await fitsWidth(page), `Add a webhook endpoint fits ${at}`);
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: 'Ids as strings' }).click();
  await page.getByRole('dialog', { name: 'Send ids as strings?' }).waitFor();
  await assertAccessible(page, `Send ids as strings at ${at}`, diagnostic);
  await page.keyboard.press('Escape');
}

describe('the console: offline, its CSP, and accessible', { skip, timeout: 240_000 }, () => {
  it('makes every request to its own origin, and its CSP refuses inline script and style', async () => {
    const { t, page, origin, requests, errors } = await openConsole(after, { path: '/' });
    await addPlants(t, [{ id: 1, name: 'Fern', tag: 'green' }]);
    const policy = (await page.reload())!.headers()['content-security-policy'];
    assert.ok(policy !== undefined, 'the page has a CSP');
    const scripts = /(?:^|; )script-src ([^;]*)/.exec(policy)![1]!;
    assert.equal(scripts, "'self'");
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval|https?:|\*/);

    // Every view, with its dialogs and its requests, and a search.
    await signIn(page);
    await page.getByRole('searchbox', { name: 'Search' }).fill('fern');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'New plant' }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Changes' }).click();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No webhook endpoints yet.').waitFor();
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByText('No tokens yet.').waitFor();
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'About' }).click();
    await page.getByText(/^ready \(store: sqlite\)/).waitFor();
    await page.getByText(VERSION, { exact: true }).waitFor();
    assert.equal(await page.getByRole('link', { name: /API reference/ }).getAttribute('href'), 'docs');
    assert.equal(await page.getByRole('link', { name: /OpenAPI document/ }).getAttribute('href'), 'openapi.json');

    // Nothing the console does is refused by its own policy (a refusal is a console error).
    assert.deepEqual(errors(), []);

    // The policy is enforced: a script and a style sheet made in the page are refused, and said so.
    const refused = await page.evaluate(async () => {
      interface Element {
        textContent: string;
      }
      interface Doc {
        createElement(tag: string): Element;
        head: { appendChild(node: Element): void };
        body: object;
        addEventListener(type: string, listener: (event: { violatedDirective: string }) => void): void;
      }
      const inPage = globalThis as unknown as { document: Doc; inlineRan?: boolean; getComputedStyle(element: object): { display: string } };
      const { document } = inPage;
      const seen: string[] = [];
      document.addEventListener('securitypolicyviolation', (event) => seen.push(event.violatedDirective));
      const script = document.createElement('script');
      script.textContent = 'globalThis.inlineRan = true';
      document.head.appendChild(script);
      const style = document.createElement('style');
      style.textContent = 'body { display: none }';
      document.head.appendChild(style);
      while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      return { seen: seen.sort(), inlineRan: inPage.inlineRan ?? false, display: inPage.getComputedStyle(document.body).display };
    });
    assert.deepEqual(refused, { seen: ['script-src-elem', 'style-src-elem'], inlineRan: false, display: 'block' });

    assert.ok(requests.length > 10, requests.join('\n'));
    for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
    for (const url of requests) assert.ok(!url.includes(TOKEN));
    // The page's own console saw the two refusals above, and nothing else.
    assert.equal(errors().length, 2, errors().join('\n'));
    assert.ok(
      errors().every((text) => text.includes('Content Security Policy')),
      errors().join('\n'),
    );
  });

  it('has no serious or critical axe-core violation in any view (Plants, Changes, Webhooks, Tokens, About) or dialog, light and dark, wide or 375 px, and fits 375 px without sideways scrolling', async (context) => {
    const diagnostic = (text: string) => context.diagnostic(text);
    const { t, page, errors } = await openConsole(after, { config: { webhookAllowPrivateNetworks: true } });
    await addPlants(t, [
      { id: 1, name: 'Boston Fern', tag: 'fern' },
      { id: '9223372036854775807', name: 'A plant with a rather long name to wrap at narrow widths', tag: 'long-tag-name' },
    ]);
    assert.equal(
      (await t.call('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/plant-store/a/long/path/to/the/receiver' } })).statusCode,
      201,
    );
    // A token active and one revoked, for the Tokens view's two states.
    await t.tokenWith('plants:read');
    const revoked = (await t.call('POST', '/tokens', { body: { name: 'retired', scopes: ['plants:read'] } })).json<{ id: string }>();
    assert.equal((await t.call('DELETE', `/tokens/${revoked.id}`)).statusCode, 204);
    for (const [width, scheme] of [
      [1280, 'light'],
      [375, 'light'],
      [1280, 'dark'],
      [375, 'dark'],
    ] as const) {
      const at = `${width}, ${scheme}`;
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${page.url().split('#')[0]}#plants`);
      if (await page.getByLabel('Token').isVisible()) {
        await assertAccessible(page, `sign-in at ${at}`, diagnostic);
        assert.ok(await fitsWidth(page), `sign-in fits ${at}`);
        await signIn(page);
      }
      await page.getByRole('table').waitFor();
      for (const view of ['Plants', 'Changes', 'Webhooks', 'Tokens', 'About']) {
        await page.getByRole('link', { name: view }).click();
        await page.getByRole('heading', { level: 1, name: view }).waitFor();
        if (view === 'Changes') await addPlants(t, [{ id: 100 + width + scheme.length, name: 'A change' }]);
        if (view === 'Changes') await page.getByRole('table').waitFor();
        if (view === 'Webhooks') await page.getByRole('heading', { name: 'http://127.0.0.1:9/plant-store/a/long/path/to/the/receiver' }).waitFor();
        if (view === 'Webhooks') await page.getByRole('button', { name: 'Deliveries' }).click();
        if (view === 'Tokens') await page.getByRole('cell', { name: /^revoked at / }).waitFor();
        await assertAccessible(page, `${view} at ${at}`, diagnostic);
        assert.ok(await fitsWidth(page), `${view} fits ${at}`);
        if (view === 'Webhooks') await webhookDialogs(page, at, diagnostic);
      }
      // The Tokens view's dialogs: the form, a secret shown, a revocation asked.
      await page.getByRole('link', { name: 'Tokens' }).click();
      await page.getByRole('button', { name: 'Create token' }).click();
      const form = page.getByRole('dialog', { name: 'Create a token' });
      await form.getByLabel('Name').fill(`axe ${at}`);
      await form.getByRole('checkbox', { name: 'plants:read', exact: true }).check();
      await assertAccessible(page, `Create a token at ${at}`, diagnostic);
      await form.getByRole('button', { name: 'Create' }).click();
      await page.getByRole('dialog', { name: 'Token created' }).getByLabel('Secret').waitFor();
      await assertAccessible(page, `Token created at ${at}`, diagnostic);
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('button', { name: `Revoke axe ${at}`, exact: true }).click();
      await page.getByRole('dialog', { name: `Revoke the token axe ${at}?` }).waitFor();
      await assertAccessible(page, `Revoke a token at ${at}`, diagnostic);
      await page.keyboard.press('Escape');
      await page.getByRole('link', { name: 'Plants' }).click();
      await page.getByRole('button', { name: 'New plant' }).click();
      await assertAccessible(page, `New plant at ${at}`, diagnostic);
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'Delete plant 1', exact: true }).click();
      await assertAccessible(page, `Delete at ${at}`, diagnostic);
      await page.keyboard.press('Escape');
      // A row selected (its own colours), sorted by a header, the bulk delete's dialog, the shortcuts' list.
      await page.getByRole('columnheader', { name: 'Name' }).getByRole('button').click();
      await page.getByRole('checkbox', { name: 'Select Boston Fern' }).check();
      await assertAccessible(page, `Plants with a row selected, sorted by name, at ${at}`, diagnostic);
      assert.ok(await fitsWidth(page), `Plants with a row selected fits ${at}`);
      await page.getByRole('button', { name: 'Delete selected' }).click();
      await page.getByRole('dialog', { name: 'Delete 1 plant?' }).waitFor();
      await assertAccessible(page, `Delete selected at ${at}`, diagnostic);
      await page.keyboard.press('Escape');
      await page.getByRole('checkbox', { name: 'Select Boston Fern' }).uncheck();
      await page.keyboard.press('?');
      await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
      await assertAccessible(page, `Keyboard shortcuts at ${at}`, diagnostic);
      await page.keyboard.press('Escape');
    }
    assert.deepEqual(errors(), []);
  });

  it('is usable by keyboard alone: sign in, reach a section, make a plant, close a dialog', async () => {
    const { t, page, errors } = await openConsole(after);
    const focused = () =>
      page.evaluate(() => {
        const { document } = globalThis as unknown as { document: { activeElement: { tagName: string; id: string; textContent: string } | null } };
        const active = document.activeElement!;
        return active.tagName === 'INPUT' ? `input#${active.id}` : `${active.tagName.toLowerCase()}: ${active.textContent.trim()}`;
      });
    // The form's one field has the focus as it shows.
    await until(
      () =>
        page
          .getByLabel('Token')
          .evaluate((input) => input === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement),
      'the focus in Token',
    );
    await page.keyboard.type(TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();

    // Signed in, the focus is on the view; back from it, the header: Sign out, …, the sections, the skip link first.
    assert.match(await focused(), /^main: /);
    for (let i = 0; i < 10 && (await focused()) !== 'a: Plants'; i++) await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(), 'a: Skip to content');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'a: Plants');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Changes' }).waitFor();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Plants' }).waitFor();

    // To "New plant" by Tab; the dialog takes the focus, Tab moves through its fields, Enter saves.
    for (let i = 0; i < 30 && (await focused()) !== 'button: New plant'; i++) await page.keyboard.press('Tab');
    assert.equal(await focused(), 'button: New plant');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'New plant' });
    await dialog.waitFor();
    await until(async () => (await focused()).startsWith('input#'), 'the focus in the dialog');
    await page.keyboard.type('42');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Typed plant');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Created plant 42.' }).waitFor();
    assert.deepEqual((await t.call('GET', '/plants/42')).json(), { id: 42, name: 'Typed plant' });

    // Escape closes a dialog, and nothing is sent.
    for (let i = 0; i < 30 && (await focused()) !== 'button: New plant'; i++) await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.deepEqual(errors(), []);
  });
});
