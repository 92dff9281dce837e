import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Request } from 'playwright-core';
import { browserSkip, launchChromium } from '../chromium.js';
import { tempDir, testApp, type TestApp } from '../helpers.js';
import { listen } from './sse.js';
import { needs, until } from '../toolkit.js';

/**
 * The change feed in a browser's own EventSource (Debian's Chromium): a page of the service's origin
 * follows GET /events with the token as access_token (EventSource cannot send headers), gets creates,
 * updates and deletes as they commit, and after its connection is cut resumes with Last-Event-ID, missing
 * nothing and getting nothing twice.
 */

const skip = needs('the EventSource browser test', browserSkip);

interface Seen {
  id: string;
  type: string;
  data: string;
}

/** The events as GET /events lists them: [id, type, JSON text]. */
async function listed(t: TestApp): Promise<Array<[string, string, string]>> {
  const res = await t.call('GET', '/events?limit=1000');
  const texts = res.payload === '[]' ? [] : res.payload.slice(1, -1).split(/,(?=\{"id":"msg_)/);
  return texts.map((text) => {
    const { id, type } = JSON.parse(text.replace(/"data":.*$/, '"data":0}')) as { id: string; type: string };
    return [id, type, text];
  });
}

test("Chromium's EventSource gets every change as it commits, and resumes after a cut with Last-Event-ID", { skip, timeout: 120_000 }, async () => {
  const t = await testApp(after, { config: { eventsRetryMs: 200 } });
  const reader = await t.tokenWith('events:read');
  const origin = await listen(t.app);
  const browser = await launchChromium(tempDir(after));
  after(() => browser.close());
  const requested: Array<Promise<Record<string, string>>> = [];
  browser.on('request', (request: Request) => {
    if (new URL(request.url()).pathname !== '/events') return;
    const headers = request.allHeaders();
    // A reconnect can come as the test ends (the app closing its connections) and the browser close before
    // its headers are read: that rejection is no failure. One the test awaits still fails it.
    headers.catch(() => undefined);
    requested.push(headers);
  });
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // A page of the service's origin, whose Content-Security-Policy lets it connect to the service.
  await page.goto(`${origin}/docs`);
  await page.evaluate((token) => {
    // Runs in the page: the browser's own EventSource (the test's TypeScript knows Node's globals, not the DOM's).
    interface BrowserEvent {
      lastEventId: string;
      type: string;
      data: string;
    }
    interface BrowserEventSource {
      addEventListener(type: string, listener: (event: BrowserEvent) => void, options?: { once: boolean }): void;
    }
    const page = globalThis as unknown as { seen: Seen[]; EventSource: new (url: string) => BrowserEventSource };
    page.seen = [];
    const source = new page.EventSource(`/events?access_token=${encodeURIComponent(token)}`);
    for (const type of ['plant.created', 'plant.updated', 'plant.deleted']) {
      source.addEventListener(type, (event) => page.seen.push({ id: event.lastEventId, type: event.type, data: event.data }));
    }
    return new Promise<void>((resolve) => source.addEventListener('open', () => resolve(), { once: true }));
  }, reader);
  const seen = () => page.evaluate(() => (globalThis as unknown as { seen: Seen[] }).seen);

  assert.equal((await t.call('POST', '/plants', { body: '{"id":9007199254740993,"name":"Big leaf","tag":"green"}' })).statusCode, 200);
  assert.equal((await t.call('PATCH', '/plants/9007199254740993', { body: '{"tag":null}' })).statusCode, 200);
  assert.equal((await t.call('DELETE', '/plants/9007199254740993')).statusCode, 204);
  await until(async () => (await seen()).length === 3, 'three events in the browser');

  // Cut every connection: the browser reconnects by itself, after the retry hint, with Last-Event-ID.
  t.app.server.closeAllConnections();
  for (let id = 1; id <= 3; id++) assert.equal((await t.call('POST', '/plants', { body: `{"id":${id},"name":"while cut ${id}"}` })).statusCode, 200);
  await until(async () => (await seen()).length === 6, 'the events made while cut');

  const all = await listed(t);
  assert.deepEqual(
    (await seen()).map((e) => [e.id, e.type, e.data]),
    all,
    'every event once, in order, as GET /events lists them (the id beyond 2^53 exact)',
  );
  assert.match(all[0]![2], /"data":\{"id":9007199254740993,"name":"Big leaf","tag":"green"\}/);
  const streams = await Promise.all(requested);
  assert.ok(streams.length >= 2, `the browser reconnected (${streams.length} requests)`);
  assert.equal(streams[0]!['last-event-id'], undefined);
  assert.equal(streams.at(-1)!['last-event-id'], all[2]![0], 'the reconnect resumed after the last event it had');
  assert.equal(streams.at(-1)!.accept, 'text/event-stream');
  assert.deepEqual(errors, []);
});
