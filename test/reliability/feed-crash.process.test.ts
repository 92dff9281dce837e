import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FEED_START_ID } from '../../src/store/event-store.js';
import { openSource } from '../events/sse.js';
import { tempDir } from '../helpers.js';
import { killService } from '../process/supervised.js';
import { request, startServer, type ServerProcess } from '../process.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { allPlants, TOKEN, verifyAfterCrash, writer, type Known, type Plant } from './crash-workload.js';
import { needs, sleep, until } from '../toolkit.js';

/**
 * The change feed across crashes: an EventSource consumer follows GET /events while clients write at full
 * speed to two workers (WEB_CONCURRENCY=2), on SQLite and on PostgreSQL, and the whole service is SIGKILLed at a random moment,
 * several rounds, restarted each time (on another port: the consumer's reconnects are sent to it). The
 * consumer resumes with Last-Event-ID every time, and in the end has every event of the feed exactly once,
 * in the feed's order; replaying them gives the plants as stored, every acknowledged write among them.
 */

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3);
const CLIENTS = 8;

/** Every event of the feed, oldest first: [id, JSON text]. */
async function wholeFeed(server: ServerProcess): Promise<Array<[string, string]>> {
  const all: Array<[string, string]> = [];
  let after = FEED_START_ID;
  for (;;) {
    const page = await request(`${server.url}/events?limit=1000&after=${after}`, { token: TOKEN });
    assert.equal(page.status, 200, page.text);
    const events = JSON.parse(page.text) as Array<{ id: string }>;
    for (const event of events) all.push([event.id, JSON.stringify(event)]);
    if (events.length < 1000) return all;
    after = events.at(-1)!.id;
  }
}

const skipPostgres = needs('the change feed across SIGKILL on PostgreSQL', postgresUnavailableReason());
const TITLE = `the change feed across SIGKILL, ${ROUNDS} rounds, two workers: every event once, in order, to a consumer resuming with Last-Event-ID`;

describe('the change feed across SIGKILL on SQLite', () => {
  it(TITLE, { timeout: 10 * 60_000 }, async (t) => crashes(t, `file:${join(tempDir(after), 'feed.db')}`));
});

if (skipPostgres) {
  describe('the change feed across SIGKILL on PostgreSQL', { skip: skipPostgres }, () => {});
} else {
  const db = await TestPostgres.start(after);
  describe('the change feed across SIGKILL on PostgreSQL', () => {
    it(TITLE, { timeout: 10 * 60_000 }, async (t) => crashes(t, await db.createDatabase()));
  });
}

async function crashes(t: { diagnostic(message: string): void }, databaseUrl: string): Promise<void> {
  const env = { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '2', EVENTS_RETRY_MS: '50', EVENTS_POLL_MS: '100' };
  const known = new Map<string, Known>();
  let server = await startServer(after, { env });
  const consumer = openSource(after, `${server.url}/events?after=${FEED_START_ID}`, TOKEN, (url) => {
    const { pathname, search } = new URL(url);
    return `${server.url}${pathname}${search}`;
  });
  await until(() => consumer.source.readyState === consumer.source.OPEN, 'the consumer to connect');

  for (let round = 1; round <= ROUNDS; round++) {
    const stop = { now: false };
    const writers = Array.from({ length: CLIENTS }, (_, w) => writer(server, round, w, known, stop));
    const receivedBefore = consumer.received.length;
    await until(() => consumer.received.length >= receivedBefore + 300, 'events to reach the consumer', { timeoutMs: 120_000 });
    await sleep(Math.floor(Math.random() * 500));
    killService(server);
    await server.exited;
    stop.now = true;
    await Promise.all(writers);
    server = await startServer(after, { env });
    await verifyAfterCrash(server, known);
    t.diagnostic(`round ${round}: ${consumer.received.length} events received, ${consumer.connections.length} connections`);
  }

  // A last write: once it has reached the consumer, so has everything before it.
  const last = await request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body: '{"id":1,"name":"the last"}' });
  assert.equal(last.status, 200, last.text);
  const feed = await wholeFeed(server);
  const newest = feed.at(-1)![0];
  await until(() => consumer.received.some((event) => event.id === newest), 'the consumer to get the newest event', { timeoutMs: 60_000 });
  const received = consumer.received.map((event) => event.id);
  assert.equal(new Set(received).size, received.length, 'no event twice');
  assert.deepEqual(
    received,
    feed.map(([id]) => id),
    'every event of the feed, in its order',
  );
  assert.deepEqual(
    consumer.received.map((event) => event.data),
    feed.map(([, text]) => text),
    'each as the feed lists it',
  );
  assert.deepEqual(
    consumer.statuses.filter((status) => status !== 200),
    [],
    'every reconnect resumed',
  );

  // Replaying the events gives the plants as stored.
  const replayed = new Map<string, Plant>();
  for (const { data } of consumer.received) {
    const { type, data: plant } = JSON.parse(data) as { type: string; data: { id: number } & Plant };
    const { id, ...rest } = plant;
    if (type === 'plant.deleted') replayed.delete(String(id));
    else replayed.set(String(id), rest);
  }
  assert.deepEqual(replayed, await allPlants(server));
  await server.stop('SIGTERM');
}
