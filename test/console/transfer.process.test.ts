import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { browserSkip } from '../chromium.js';
import { addPlants, openConsole, shownIds, signIn } from './harness.js';
import { needs, until } from '../toolkit.js';

const skip = needs("the console's import and export browser tests", browserSkip);

describe('the console: import and export', { skip, timeout: 180_000 }, () => {
  it('imports a CSV file with its progress and the counts, and tells a bad file in words, nothing stored', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [{ id: 1, name: 'Old name' }]);
    await signIn(page);
    const file = page.getByLabel('File (CSV or NDJSON)');
    const result = page.getByRole('region', { name: 'Import' });

    // What the import's progress bar showed, each state once, as it showed it (read in the page as it changes).
    await page.evaluate(() => {
      interface Element {
        getAttribute(name: string): string | null;
        closest(selector: string): { textContent: string | null } | null;
      }
      const inPage = globalThis as unknown as {
        seen: string[];
        document: { body: object; querySelector(selector: string): Element | null };
        MutationObserver: new (callback: () => void) => { observe(target: object, options: object): void };
      };
      inPage.seen = [];
      new inPage.MutationObserver(() => {
        const bar = inPage.document.querySelector('progress');
        if (bar === null) return;
        const state = `${bar.closest('label')?.textContent?.trim()}: ${bar.getAttribute('value')} of ${bar.getAttribute('max')}`;
        if (inPage.seen.at(-1) !== state) inPage.seen.push(state);
      }).observe(inPage.document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    let sent: { type: string | undefined; authorization: string | undefined } | undefined;
    page.on('request', (request) => {
      if (request.url().includes('/plants/import')) {
        sent = { type: request.headers()['content-type'], authorization: request.headers().authorization };
      }
    });
    const csv = 'id,name,tag\r\n1,New name,renamed\r\n2,"Fern, Boston",fern\r\n3,Aloe,\r\n9223372036854775807,Biggest,\r\n';
    await file.setInputFiles({ name: 'plants.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import' }).click();
    await result.getByRole('status').filter({ hasText: 'Imported plants.csv: 3 created, 1 replaced.' }).waitFor();
    assert.equal(await result.getByRole('progressbar').count(), 0, 'the progress bar goes once done');
    const seen = await page.evaluate(() => (globalThis as unknown as { seen: string[] }).seen);
    assert.equal(seen[0], `Sending: 0 of ${csv.length}`);
    assert.equal(seen.at(-1), `Sent; the service is storing the plants: ${csv.length} of ${csv.length}`);
    assert.deepEqual(sent, { type: 'text/csv', authorization: 'Bearer test-token-full-access-0123456789a' });
    await until(async () => (await shownIds(page)).join() === '1,2,3,9223372036854775807', 'the imported plants in the table');
    assert.equal(
      (await t.call('GET', '/plants?limit=10')).payload,
      JSON.stringify([
        { id: 1, name: 'New name', tag: 'renamed' },
        { id: 2, name: 'Fern, Boston', tag: 'fern' },
        { id: 3, name: 'Aloe' },
      ]).replace(/\]$/, ',{"id":9223372036854775807,"name":"Biggest"}]'),
    );

    // A bad row: nothing stored, and the service's words.
    await file.setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('id,name,tag\r\n10,Ten,\r\n11,,\r\n') });
    await page.getByRole('button', { name: 'Import' }).click();
    const problem = result.getByRole('alert');
    await problem.waitFor();
    assert.equal(await problem.innerText(), 'Nothing imported. Refused (HTTP 400): line 3: name must not be empty.');
    assert.equal((await t.call('GET', '/plants/10')).statusCode, 404);

    // NDJSON, refusing the whole file when a plant exists already.
    const ndjson = '{"id":20,"name":"Twenty"}\n{"id":1,"name":"Exists"}\n';
    await file.setInputFiles({ name: 'more.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(ndjson) });
    await page.getByLabel('Plants that exist already').selectOption({ label: 'Refuse the whole import' });
    await page.getByRole('button', { name: 'Import' }).click();
    await problem
      .filter({ hasText: 'Nothing imported. Refused (HTTP 409): a plant with id 1 exists already (mode=create-only): nothing was imported.' })
      .waitFor();
    assert.equal((await t.call('GET', '/plants/20')).statusCode, 404);
    await page.getByLabel('Plants that exist already').selectOption({ label: 'Replace them' });
    await page.getByRole('button', { name: 'Import' }).click();
    await result.getByRole('status').filter({ hasText: 'Imported more.ndjson: 1 created, 1 replaced.' }).waitFor();

    // A file of another kind is refused before anything is sent.
    await file.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    await page.getByRole('button', { name: 'Import' }).click();
    await problem.filter({ hasText: 'notes.txt: choose a .csv, .ndjson or .json file.' }).waitFor();
    assert.deepEqual(errors(), []);
  });

  it('exports what the filter selects, as CSV and NDJSON files', async () => {
    const { t, page, errors } = await openConsole(after);
    await addPlants(t, [
      { id: 1, name: 'Boston Fern', tag: 'fern' },
      { id: 2, name: 'Monstera', tag: 'tropical' },
      { id: 3, name: 'Maidenhair fern', tag: 'fern' },
      { id: '9007199254740993', name: 'Big fern', tag: 'fern' },
    ]);
    await signIn(page);
    await page.getByLabel('With tag').fill('fern');
    await page.getByLabel('Sort by').selectOption({ label: 'Name, Z to A' });
    await page.getByRole('button', { name: 'Search' }).click();
    await until(async () => (await shownIds(page)).join() === '3,1,9007199254740993', 'the ferns by name, descending');

    for (const [button, format, expected] of [
      ['Export CSV', 'csv', 'id,name,tag\r\n3,Maidenhair fern,fern\r\n1,Boston Fern,fern\r\n9007199254740993,Big fern,fern\r\n'],
      [
        'Export NDJSON',
        'ndjson',
        '{"id":3,"name":"Maidenhair fern","tag":"fern"}\n{"id":1,"name":"Boston Fern","tag":"fern"}\n{"id":9007199254740993,"name":"Big fern","tag":"fern"}\n',
      ],
    ] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
      assert.equal(download.suggestedFilename(), `plants.${format}`);
      const text = readFileSync(await download.path(), 'utf8');
      assert.equal(text, expected);
      assert.equal(text, (await t.call('GET', `/plants?tag=fern&sort=-name&format=${format}`)).payload);
    }
    assert.deepEqual(errors(), []);
  });
});
