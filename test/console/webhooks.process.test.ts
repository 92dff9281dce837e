import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { browserSkip } from '../chromium.js';
import { webhookHarness } from '../webhooks/harness.js';
import { Receiver, verify } from '../webhooks/receiver.js';
import { addPlants, openConsole, rows, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's webhook browser tests", browserSkip);

/** Adds an endpoint in the console (ids in its deliveries as numbers unless told); the secret it shows once. */
async function addEndpoint(page: Page, url: string, description: string, without: string[] = [], ids?: 'strings'): Promise<string> {
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
  await dialog.getByLabel('URL').fill(url);
  for (const type of without) await dialog.getByRole('checkbox', { name: type }).uncheck();
  await dialog.getByLabel('Description').fill(description);
  // Numbers, the default, are chosen until a person chooses otherwise.
  const ints = dialog.getByRole('radiogroup', { name: 'Ids in deliveries' });
  assert.equal(await ints.getByRole('radio', { name: 'Numbers (the default)' }).isChecked(), true);
  if (ids === 'strings') await ints.getByRole('radio', { name: 'Strings, for JavaScript receivers' }).check();
  await dialog.getByRole('button', { name: 'Save' }).click();
  return shownSecret(page);
}

/** The secret of the "Signing secret" dialog, copied with its button, then the dialog closed. */
async function shownSecret(page: Page): Promise<string> {
  const dialog = page.getByRole('dialog', { name: 'Signing secret' });
  const secret = await dialog.getByLabel('Secret').inputValue();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
  await dialog.getByRole('button', { name: 'Copy' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
  assert.equal(
    await page.evaluate(() =>
      (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
    ),
    secret,
  );
  await dialog.getByRole('button', { name: 'Done' }).click();
  await dialog.waitFor({ state: 'detached' });
  return secret;
}

function endpointCard(page: Page, url: string): Locator {
  return page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: url, exact: true }) });
}

/** The card's facts, "State: enabled" and so on. */
async function facts(card: Locator): Promise<Record<string, string>> {
  const terms = await card.locator('dt').allInnerTexts();
  const values = await card.locator('dd').allInnerTexts();
  return Object.fromEntries(terms.map((term, i) => [term, values[i]!]));
}

describe('the console: webhooks', { skip, timeout: 180_000 }, () => {
  it('adds endpoints (secret shown once, copied), shows a failing one and its deliveries, replays, rotates, disables and deletes', async () => {
    // Each failed attempt is retried once, 50 ms later; then the message has failed.
    const h = await webhookHarness(after, { dispatcher: { retrySchedule: [0.05] } });
    h.receiver.answer = () => ({ status: 500 });
    const gone = await Receiver.start(after);
    gone.answer = () => ({ status: 410 });
    const { page, errors } = await openConsole(after, { t: h.t });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No webhook endpoints yet.').waitFor();

    const secret = await addEndpoint(page, h.receiver.url, 'The shop front');
    await addEndpoint(page, gone.url, 'Retired', ['plant.deleted']);
    const failing = endpointCard(page, h.receiver.url);
    const retired = endpointCard(page, gone.url);
    // Its id and when it was added as the API has them, the time in the browser's own words.
    const listed = (await h.t.call('GET', '/webhooks')).json<Array<{ id: string; url: string; createdAt: string }>>();
    const added = listed.find((endpoint) => endpoint.url === h.receiver.url)!;
    assert.deepEqual(await facts(failing), {
      State: 'enabled',
      Events: 'plant.created, plant.updated, plant.deleted',
      'Ids in deliveries': 'numbers',
      Description: 'The shop front',
      Added: await page.evaluate((iso) => new Date(iso).toLocaleString(), added.createdAt),
      Id: added.id,
    });
    assert.equal((await facts(retired)).Events, 'plant.created, plant.updated');

    // A plant: its message fails at the first endpoint; the second answers 410 Gone and is disabled at once.
    await addPlants(h.t, [{ id: 1, name: 'Fern' }]);
    await h.receiver.waitFor(2);
    await gone.waitFor(1);
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      return (await facts(retired)).State!.startsWith('disabled: ');
    }, 'the 410 endpoint disabled');
    assert.match((await facts(retired)).State!, /^disabled: .*410/);

    await failing.getByRole('button', { name: 'Deliveries' }).click();
    const deliveries = failing.getByRole('region', { name: `Deliveries of ${h.receiver.url}` });
    await until(async () => {
      await deliveries.getByRole('button', { name: 'Refresh deliveries' }).click();
      return (await rows(page, deliveries.getByRole('table'))).some((row) => row.includes('failed'));
    }, 'the failed message');
    const [failed] = await rows(page, deliveries.getByRole('table'));
    const [event, status, attempts, lastAnswer, lastError, lastAttempt, nextAttempt] = failed!.split(' | ');
    assert.deepEqual([event, status, attempts, lastAnswer, lastError, nextAttempt], ['plant.created plant 1', 'failed', '2', '500', 'HTTP 500', '—']);
    assert.notEqual(lastAttempt, '—');
    assert.deepEqual(await deliveries.getByRole('columnheader').allInnerTexts(), [
      'Event',
      'Status',
      'Attempts',
      'Last answer',
      'Last error',
      'Last attempt',
      'Next attempt',
    ]);

    // A receiver that asks for time (503, Retry-After: an hour): pending, with its next attempt.
    h.receiver.answer = () => ({ status: 503, headers: { 'retry-after': '3600' } });
    await addPlants(h.t, [{ id: 2, name: 'Ivy' }]);
    await h.receiver.waitFor(3);
    // Pending before its attempt is recorded too (the receiver has answered, the store not yet written it):
    // wait for the attempt, not the status alone.
    await until(async () => {
      await deliveries.getByRole('button', { name: 'Refresh deliveries' }).click();
      const [status, attempts] = (await rows(page, deliveries.getByRole('table')))[0]!.split(' | ').slice(1, 3);
      return status === 'pending' && attempts === '1';
    }, 'the pending message, its attempt recorded');
    const [pending] = await rows(page, deliveries.getByRole('table'));
    const cells = pending!.split(' | ');
    assert.deepEqual(cells.slice(0, 5), ['plant.created plant 2', 'pending', '1', '503', 'HTTP 503']);
    assert.notEqual(cells[6], '—', 'the next attempt is shown');
    await deliveries.getByLabel('Status').selectOption({ label: 'Failed' });
    await until(async () => (await rows(page, deliveries.getByRole('table'))).length === 1, 'the failed message alone');

    // The receiver is fixed: the failed message is replayed and delivered, signed with the secret shown.
    h.receiver.answer = () => ({ status: 204 });
    await deliveries.getByRole('button', { name: 'Replay' }).click();
    await deliveries.getByRole('status').filter({ hasText: 'Replay: 1 failed message sent again.' }).waitFor();
    const [, , , delivered] = await h.receiver.waitFor(4);
    assert.equal(verify(secret, delivered!).data.id, '1');
    await deliveries.getByLabel('Status').selectOption({ label: 'Delivered' });
    await until(
      async () => (await rows(page, deliveries.getByRole('table')))[0]?.startsWith('plant.created plant 1 | delivered | 3 | 204') === true,
      'delivered',
    );

    // A new secret, shown once; deliveries are signed with it from now on.
    await failing.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate' }).click();
    const rotated = await shownSecret(page);
    assert.notEqual(rotated, secret);
    await addPlants(h.t, [{ id: 3, name: 'Aloe' }]);
    const [, , , , fifth] = await h.receiver.waitFor(5);
    assert.equal(verify(rotated, fifth!).data.id, '3');

    // Disable and enable again; then delete, after asking.
    await failing.getByRole('button', { name: 'Disable' }).click();
    await until(async () => (await facts(failing)).State === 'disabled', 'disabled');
    assert.equal((await h.t.call('GET', `/webhooks/${(await facts(failing)).Id}`)).json().enabled, false);
    await failing.getByRole('button', { name: 'Enable' }).click();
    await until(async () => (await facts(failing)).State === 'enabled', 'enabled again');
    await retired.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this endpoint?' }).getByRole('button', { name: 'Delete' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deleted ${gone.url}.` })
      .waitFor();
    await retired.waitFor({ state: 'detached' });
    assert.equal((await h.t.call('GET', '/webhooks')).json().length, 1);
    assert.deepEqual(errors(), []);
  });

  it('writes ids as numbers or strings: chosen when adding (numbers by default), shown and changed from the list', async () => {
    const h = await webhookHarness(after);
    const other = await Receiver.start(after);
    const { page, errors } = await openConsole(after, { t: h.t });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No webhook endpoints yet.').waitFor();
    await addEndpoint(page, h.receiver.url, 'JavaScript', [], 'strings');
    await addEndpoint(page, other.url, 'Numbers');
    const strings = endpointCard(page, h.receiver.url);
    const numbers = endpointCard(page, other.url);
    const stored = async (card: Locator) => (await h.t.call('GET', `/webhooks/${(await facts(card)).Id}`)).json<{ int64?: string }>();
    // The API writes int64 only when it is "string"; absent is number.
    assert.equal((await stored(strings)).int64, 'string');
    assert.equal('int64' in (await stored(numbers)), false);
    assert.equal((await facts(strings))['Ids in deliveries'], 'strings');
    assert.equal((await facts(numbers))['Ids in deliveries'], 'numbers');

    // Deliveries say so: an id beyond 2^53 as a JSON string to one, an integer to the other.
    await addPlants(h.t, [{ id: '9007199254740993', name: 'Monstera' }]);
    const [toStrings] = await h.receiver.waitFor(1);
    const [toNumbers] = await other.waitFor(1);
    assert.match(toStrings!.body, /"data":\{"id":"9007199254740993",/);
    assert.match(toNumbers!.body, /"data":\{"id":9007199254740993,/);

    // Switched from the list, after asking; the API and the list agree.
    await strings.getByRole('button', { name: `Ids as numbers for ${h.receiver.url}`, exact: true }).click();
    await page.getByRole('dialog', { name: 'Send ids as numbers?' }).getByRole('button', { name: 'Change' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deliveries to ${h.receiver.url} now write ids as numbers.` })
      .waitFor();
    await until(async () => (await facts(strings))['Ids in deliveries'] === 'numbers', 'numbers shown');
    assert.equal('int64' in (await stored(strings)), false);
    await numbers.getByRole('button', { name: `Ids as strings for ${other.url}`, exact: true }).click();
    await page.getByRole('dialog', { name: 'Send ids as strings?' }).getByRole('button', { name: 'Change' }).click();
    await until(async () => (await facts(numbers))['Ids in deliveries'] === 'strings', 'strings shown');
    assert.equal((await stored(numbers)).int64, 'string');

    // Cancelled: nothing changes. Refused (the endpoint deleted meanwhile): the service's words, as for the page's other actions.
    await numbers.getByRole('button', { name: 'Ids as numbers' }).click();
    await page.getByRole('dialog', { name: 'Send ids as numbers?' }).getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await stored(numbers)).int64, 'string');
    const id = (await facts(numbers)).Id!;
    assert.equal((await h.t.call('DELETE', `/webhooks/${id}`)).statusCode, 204);
    await numbers.getByRole('button', { name: 'Ids as numbers' }).click();
    await page.getByRole('dialog', { name: 'Send ids as numbers?' }).getByRole('button', { name: 'Change' }).click();
    // Said once the list was read again (the endpoint gone from it), and kept: a page read well does not clear it.
    await numbers.waitFor({ state: 'detached' });
    assert.match(await page.getByRole('alert').innerText({ timeout: 5000 }), /^Refused \(HTTP 404\): /);
    assert.deepEqual(errors(), []);
  });

  it('tells an endpoint the service refuses in words', async () => {
    const h = await webhookHarness(after);
    const { page, errors } = await openConsole(after, { t: h.t });
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await dialog.getByLabel('URL').fill('ftp://example.com/hooks');
    await dialog.getByRole('button', { name: 'Save' }).click();
    assert.equal(await dialog.getByRole('alert').innerText(), 'Refused (HTTP 400): body.url must be an absolute http:// or https:// URL.');
    for (const type of ['plant.created', 'plant.updated', 'plant.deleted']) await dialog.getByRole('checkbox', { name: type }).uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Choose at least one event type.' }).waitFor();
    assert.equal((await h.t.call('GET', '/webhooks')).json().length, 0);
    assert.deepEqual(errors(), []);
  });
});
