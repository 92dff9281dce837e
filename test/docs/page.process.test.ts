import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { browserSkip, watchedPage } from '../chromium.js';
import { tempDir, testApp, TOKEN } from '../helpers.js';
import { needs, until } from '../toolkit.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON */
type Json = any;

const skip = needs('the /docs browser test', browserSkip);

/** 2^53 + 1: a JS number cannot hold it (JSON.parse reads …992). */
const BIG_ID = '9007199254740993';

test(
  "/docs in Chromium: every operation shown, the token explained, headers and error examples rendered, nothing from another origin, no console error, a request sent from 'Try it out'",
  { skip, timeout: 120_000 },
  async (context) => {
    const t = await testApp(after);
    assert.equal((await t.call('POST', '/plants', { body: `{"id": ${BIG_ID}, "name": "Big leaf"}` })).statusCode, 200);
    const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
    // Every operation, and every webhook event the service sends.
    const summaries: string[] = [...Object.values(doc.paths), ...Object.values(doc.webhooks ?? {})].flatMap((item: Json) =>
      Object.values(item).map((op: Json) => op.summary as string),
    );
    assert.ok(Object.keys(doc.webhooks).length === 3, 'the document has the three webhook events');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

    const dir = tempDir(after);
    const { page, requests, errors } = await watchedPage(dir, after);

    // /docs/ (a trailing slash typed or linked) lands on the page.
    await page.goto(`${origin}/docs/`);
    assert.equal(page.url(), `${origin}/docs`);
    const shown = page.locator('.opblock-summary-description');
    await shown.nth(summaries.length - 1).waitFor();
    assert.deepEqual((await shown.allInnerTexts()).sort(), [...summaries].sort());
    await page.getByText('Schemas', { exact: true }).waitFor();

    // Authorize with the token, then read the big plant from its operation's console.
    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.auth-container input').fill(TOKEN);
    await page.locator('.auth-btn-wrapper button.authorize').click();
    await page.locator('.auth-btn-wrapper button.btn-done').click();
    const getPlant = page.locator('.opblock', { has: page.getByText(doc.paths['/plants/{id}'].get.summary, { exact: true }) });
    await getPlant.locator('.opblock-summary').click();
    await getPlant.getByRole('button', { name: 'Try it out' }).click();
    await getPlant.locator('input[placeholder="id"]').fill(BIG_ID);
    await getPlant.getByRole('button', { name: 'Execute' }).click();
    const answer = getPlant.locator('.live-responses-table tbody tr.response');
    await answer.waitFor();
    assert.equal((await answer.locator('.response-col_status').innerText()).trim(), '200');
    const body = await answer.locator('.response-col_description pre').first().innerText();
    assert.match(body, new RegExp(`"id": ${BIG_ID}\\b`), 'the id as the service sent it, not rounded');
    assert.deepEqual(JSON.parse(body.replace(BIG_ID, '0')), { id: 0, name: 'Big leaf' });

    // The page teaches: how to get a token and send it, at the top.
    const info = await page.locator('.information-container .info').innerText();
    assert.match(info, /npx plant-store token create --name reporting --scope plants:read/);
    assert.match(info, /Authorization: Bearer <token>/);
    // Its examples name the address the page came from (a port of the test's), never the default one.
    assert.ok(info.includes(`curl -s ${origin}/plants -H`), info);
    assert.doesNotMatch(info, /127\.0\.0\.1:8080/);
    // Header descriptions render whole (the ETag's "<version>" is not taken for HTML), and the error examples are real.
    const plantText = await getPlant.innerText();
    assert.match(plantText, /"<version>"/);
    assert.match(plantText, /"message": "no plant with id 1"/);
    assert.match(plantText, /"message": "missing bearer token: send Authorization: Bearer <token>"/);
    // GET /plants: no Accept parameter beside the media-type selector, which offers the export formats.
    const listPlants = page.locator('.opblock', { has: page.getByText(doc.paths['/plants'].get.summary, { exact: true }) });
    await listPlants.locator('.opblock-summary').click();
    await listPlants.locator('.parameters').first().waitFor();
    const parameters = await listPlants.locator('tr[data-param-name]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-param-name')));
    assert.deepEqual([...parameters].sort(), ['after', 'cursor', 'format', 'id', 'if-match', 'if-none-match', 'limit', 'prefer', 'q', 'sort', 'tag']);
    const mediaTypes = await listPlants.locator('.response-control-media-type select').first().locator('option').allInnerTexts();
    assert.deepEqual([...mediaTypes].sort(), ['application/json', 'application/x-ndjson', 'text/csv']);

    const screenshot = join(dir, 'docs.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    assert.deepEqual([...readFileSync(screenshot).subarray(1, 4)], [...Buffer.from('PNG')]);
    context.diagnostic(`screenshot: ${screenshot} (removed when the test file ends)`);

    assert.ok(requests.includes(`${origin}/openapi.json`), requests.join('\n'));
    assert.ok(requests.includes(`${origin}/plants/${BIG_ID}`), requests.join('\n'));
    for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
    assert.deepEqual(errors, []);
  },
);

test(
  "/docs in Chromium: Try it out on the import sends each media type's pre-filled example, and the service takes it",
  { skip, timeout: 120_000 },
  async () => {
    const t = await testApp(after);
    const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const { page, errors } = await watchedPage(tempDir(after), after);
    await page.goto(`${origin}/docs`);
    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.auth-container input').fill(TOKEN);
    await page.locator('.auth-btn-wrapper button.authorize').click();
    await page.locator('.auth-btn-wrapper button.btn-done').click();

    const importPlants = page.locator('.opblock', { has: page.getByText(doc.paths['/plants/import'].post.summary, { exact: true }) });
    await importPlants.locator('.opblock-summary').click();
    await importPlants.getByRole('button', { name: 'Try it out' }).click();
    const mediaType = importPlants.locator('.opblock-section-request-body select');
    const types = await mediaType.locator('option').allInnerTexts();
    assert.equal(types[0], 'application/x-ndjson', 'NDJSON, the first, is the one shown');
    assert.deepEqual([...types].sort(), ['application/json', 'application/x-ndjson', 'text/csv']);
    const sent: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/plants/import') sent.push(request.postData() ?? '');
    });
    for (const type of types) {
      await mediaType.selectOption(type);
      const answers = importPlants.locator('.live-responses-table tbody tr.response');
      await importPlants.getByRole('button', { name: 'Execute' }).click();
      await until(async () => sent.length === types.indexOf(type) + 1, `the ${type} request`);
      await answers.waitFor();
      const status = (await answers.locator('.response-col_status').innerText()).trim();
      const body = await answers.locator('.response-col_description pre').first().innerText();
      assert.equal(status, '200', `${type}: ${status} ${body} (sent ${JSON.stringify(sent.at(-1))})`);
      assert.deepEqual(Object.keys(JSON.parse(body) as object).sort(), ['created', 'replaced'], type);
      await importPlants.getByRole('button', { name: 'Clear' }).click();
    }
    assert.equal(sent[0], doc.paths['/plants/import'].post.requestBody.content['application/x-ndjson'].example, 'the example as written');
    assert.deepEqual(errors, []);
  },
);
