import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { webhookHarness } from '../webhooks/harness.js';
import { verify } from '../webhooks/receiver.js';
import { addPlants, openConsole, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's browser tests of a retry after a lost answer", browserSkip);

/**
 * A write whose answer is lost (the connection drops after the service did it), then Save again: the retry
 * must not do it twice, nor tell the person that their own write was someone else's.
 */

/** The next `method` request to `path` reaches the service, and its answer is lost on the way back. */
async function loseNextAnswer(page: Page, method: string, path: RegExp): Promise<{ lost: () => boolean }> {
  let lost = false;
  await page.route(path, async (route) => {
    if (route.request().method() !== method || lost) return route.fallback();
    lost = true;
    await route.fetch();
    await route.abort('connectionreset');
  });
  return { lost: () => lost };
}

describe('the console: Save again after a lost answer', { skip, timeout: 180_000 }, () => {
  it('adds one webhook endpoint, not two (the same Idempotency-Key), and shows its secret', async () => {
    // A receiver on this machine, which the service is let reach (nothing is delivered: no plant is written).
    const { t, page, errors } = await openConsole(after, { config: { webhookAllowPrivateNetworks: true } });
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') sent.push(request.headers()['idempotency-key'] ?? 'none');
    });
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const answer = await loseNextAnswer(page, 'POST', /\/webhooks$/);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await dialog.getByLabel('URL').fill('http://127.0.0.1:9/plants');
    await dialog.getByRole('button', { name: 'Save' }).click();
    const said = await dialog.getByRole('alert').filter({ hasText: 'The service did not answer' }).innerText();
    assert.equal(answer.lost(), true);
    assert.equal((await t.call('GET', '/webhooks')).json().length, 1, 'the first attempt made it');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog', { name: 'Signing secret' }).or(dialog.getByText('Refused')).waitFor();
    assert.equal((await t.call('GET', '/webhooks')).json().length, 1, 'and the retry made no second');
    await page.getByRole('dialog', { name: 'Signing secret' }).waitFor();
    assert.match(said, /The endpoint may have been added all the same: Save again to find out/);
    assert.equal(sent.length, 2);
    assert.notEqual(sent[0], 'none');
    assert.equal(sent[0], sent[1]);
    assert.deepEqual(
      errors().filter((text) => !text.includes('ERR_CONNECTION_RESET')),
      [],
    );
  });

  it('creates a new plant once and says so, by the same Idempotency-Key', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 7, name: 'Fern', tag: 'green' }]);
    await signIn(page);
    await until(() => page.getByRole('button', { name: 'Edit plant 7', exact: true }).isVisible(), 'the plant shown');
    const created = await loseNextAnswer(page, 'POST', /\/plants$/);
    await page.getByRole('button', { name: 'New plant' }).click();
    const dialog = page.getByRole('dialog', { name: 'New plant' });
    await dialog.getByLabel('Id').fill('5');
    await dialog.getByLabel('Name').fill('Aloe');
    await dialog.getByRole('button', { name: 'Save' }).click();
    const said = await dialog.getByRole('alert').filter({ hasText: 'The service did not answer' }).innerText();
    assert.equal(created.lost(), true);
    await dialog.getByRole('button', { name: 'Save' }).click();
    // Told before as "A plant with id 5 exists already: edit that one instead.": its own plant, as another's.
    await page
      .getByRole('status')
      .filter({ hasText: 'Created plant 5.' })
      .or(dialog.getByRole('alert').filter({ hasNotText: 'The service did not answer' }))
      .waitFor();
    // Closed (its text, if it is still open): allInnerTexts reads what is there now, where innerText would wait out
    // the 30 s default timeout for a dialog that is gone, as the message of an assertion that passes.
    assert.deepEqual(await dialog.allInnerTexts(), [], 'the dialog closed');
    assert.match(said, /The plant may have been created all the same: Save again to find out\.$/);
    assert.deepEqual((await t.call('GET', '/plants/5')).json(), { id: 5, name: 'Aloe' });

    assert.deepEqual(
      errors().filter((text) => !text.includes('ERR_CONNECTION_RESET')),
      [],
    );
  });

  it('saves an edit sent again after its answer was lost, rather than showing a conflict with no one', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 7, name: 'Fern', tag: 'green' }]);
    await signIn(page);
    await until(() => page.getByRole('button', { name: 'Edit plant 7', exact: true }).isVisible(), 'the plant shown');
    const saved = await loseNextAnswer(page, 'PUT', /\/plants\/7$/);
    await page.getByRole('button', { name: 'Edit plant 7', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit plant 7' });
    await until(() => dialog.getByRole('button', { name: 'Save' }).isEnabled(), 'the stored plant read into the form');
    await dialog.getByLabel('Name').fill('Boston fern');
    await dialog.getByRole('button', { name: 'Save' }).click();
    const said = await dialog.getByRole('alert').filter({ hasText: 'The service did not answer' }).innerText();
    assert.equal(saved.lost(), true);
    await dialog.getByRole('button', { name: 'Save' }).click();
    // Shown before as a conflict, "changed by someone else", the stored version being this user's own.
    await page
      .getByRole('status')
      .filter({ hasText: 'Saved plant 7.' })
      .or(dialog.getByRole('alert').filter({ hasNotText: 'The service did not answer' }))
      .waitFor();
    // Closed (its text, if it is still open): allInnerTexts reads what is there now, where innerText would wait out
    // the 30 s default timeout for a dialog that is gone, as the message of an assertion that passes.
    assert.deepEqual(await dialog.allInnerTexts(), [], 'the dialog closed');
    assert.match(said, /It may have been saved all the same: Save again to find out\.$/);
    assert.deepEqual((await t.call('GET', '/plants/7')).json(), { id: 7, name: 'Boston fern', tag: 'green' });
    assert.deepEqual(
      errors().filter((text) => !text.includes('ERR_CONNECTION_RESET')),
      [],
    );
  });

  it("rotates a secret once when Rotate is sent again after a lost answer: the receiver's secret stays valid", async () => {
    const h = await webhookHarness(after);
    const { secret } = await h.register();
    const { page, errors } = await openConsole(after, { t: h.t });
    const keys: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/rotate-secret')) keys.push(request.headers()['idempotency-key'] ?? 'none');
    });
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const answer = await loseNextAnswer(page, 'POST', /\/rotate-secret$/);
    const rotate = async () => {
      await page.getByRole('button', { name: /^Rotate secret/ }).click();
      await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate' }).click();
    };
    await rotate();
    await page.getByText('The secret may have been rotated all the same').or(page.getByText('The service did not answer')).first().waitFor();
    assert.equal(answer.lost(), true);
    await rotate();
    const dialog = page.getByRole('dialog', { name: 'Signing secret' });
    const rotated = await dialog.getByLabel('Secret').inputValue();
    // Deliveries are signed with the secret shown and, for 24 hours, the one the receiver has: rotated twice,
    // that one was dropped at once.
    await addPlants(h.t, [{ id: 1, name: 'Fern' }]);
    const [delivered] = await h.receiver.waitFor(1);
    assert.equal(verify(rotated, delivered!).data.id, '1');
    assert.equal(verify(secret, delivered!).data.id, '1');
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1]);
    assert.deepEqual(
      errors().filter((text) => !text.includes('ERR_CONNECTION_RESET')),
      [],
    );
  });

  it('imports once when Import is sent again after a lost answer, and says what it did', async () => {
    const { t, page, errors } = await openConsole(after);
    await signIn(page);
    const answer = await loseNextAnswer(page, 'POST', /\/plants\/import\?/);
    const result = page.getByRole('region', { name: 'Import' });
    await result.getByLabel('Plants that exist already').selectOption({ label: 'Refuse the whole import' });
    const csv = 'id,name,tag\r\n1,Fern,green\r\n2,Aloe,\r\n';
    await result.getByLabel('File (CSV or NDJSON)').setInputFiles({ name: 'plants.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await result.getByRole('button', { name: 'Import' }).click();
    const said = await result.getByRole('alert').filter({ hasText: 'The service did not answer' }).innerText();
    assert.equal(answer.lost(), true);
    assert.equal((await t.call('GET', '/plants')).json().length, 2, 'the first attempt imported');
    await result.getByRole('button', { name: 'Import' }).click();
    // Told before "Nothing imported. Refused (HTTP 409)": the plants it had made itself existed.
    await result
      .getByRole('status')
      .filter({ hasText: 'Imported plants.csv' })
      .or(result.getByRole('alert').filter({ hasNotText: 'The service did not answer' }))
      .waitFor();
    assert.equal(
      await result.getByRole('status').filter({ hasText: 'Imported plants.csv' }).innerText(),
      'Imported plants.csv: 2 created, 0 replaced.',
    );
    assert.match(said, /It may have been imported all the same: Import again to find out/);
    assert.deepEqual(
      errors().filter((text) => !text.includes('ERR_CONNECTION_RESET')),
      [],
    );
  });
  it('replays once when Replay is sent again after a lost answer (the same Idempotency-Key), and tells its count', async () => {
    // Each failed attempt is retried once, 50 ms later; then the message has failed, and a replay queues it again.
    const h = await webhookHarness(after, { dispatcher: { retrySchedule: [0.05] } });
    h.receiver.answer = () => ({ status: 500 });
    const { id } = await h.register();
    await addPlants(h.t, [{ id: 1, name: 'Fern' }]);
    await until(async () => (await h.t.call('GET', `/webhooks/${id}/deliveries?status=failed`)).json().length === 1, 'the failed message');
    const { page, errors } = await openConsole(after, { t: h.t });
    const keys: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/replay')) keys.push(request.headers()['idempotency-key'] ?? 'none');
    });
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Deliveries' }).click();
    const deliveries = page.getByRole('region', { name: `Deliveries of ${h.receiver.url}` });
    const answer = await loseNextAnswer(page, 'POST', /\/replay$/);
    await deliveries.getByRole('button', { name: 'Replay' }).click();
    const said = await deliveries.getByRole('alert').filter({ hasText: 'The service did not answer' }).innerText();
    assert.equal(answer.lost(), true);
    await deliveries.getByRole('button', { name: 'Replay' }).click();
    // The first replay's own answer, whatever the message has done since (failed again, or still pending).
    await deliveries.getByRole('status').filter({ hasText: 'Replay: 1 failed message sent again.' }).waitFor();
    assert.match(said, /The replay may have been done all the same: Replay again to find out/);
    assert.equal(keys.length, 2);
    assert.notEqual(keys[0], 'none');
    assert.equal(keys[0], keys[1]);
    assert.deepEqual(
      errors().filter((text) => !text.includes('ERR_CONNECTION_RESET')),
      [],
    );
  });
});
