import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { createClient, EVENT_TYPES, EventStreamReader, type components, type EventType, type ServerSentEvent } from '@plant-store/client';
import { EVENT_TYPES as SERVICE_EVENT_TYPES } from '../../src/model/events.js';
import { listen } from '../events/sse.js';
import { testApp, TOKEN } from '../helpers.js';

/**
 * What the client package hands a program that follows the change feed: the event types (one list, the
 * service's, copied by the build) and the Server-Sent Events reader (its follower: follow.test.ts).
 */

/** The document's event type and the package's are one type (a compile error otherwise). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameType: Same<EventType, components['schemas']['WebhookEndpoint']['events'][number]> = true;

describe('the client package: event types and the event-stream reader', () => {
  it("has the service's event types, as the OpenAPI document lists them", async () => {
    assert.equal(sameType, true);
    assert.deepEqual(EVENT_TYPES, SERVICE_EVENT_TYPES);
    const t = await testApp(after);
    const document = (await t.call('GET', '/openapi.json')).json();
    assert.deepEqual(document.components.schemas.WebhookEndpoint.properties.events.items.enum, [...EVENT_TYPES]);
  });

  it("holds copies of the service's modules, made by the build: one source each", () => {
    for (const [source, copy] of [
      ['src/model/event-types.ts', 'packages/client/src/event-types.ts'],
      ['src/json/exact.ts', 'packages/client/src/json.ts'],
    ] as const) {
      const text = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
      assert.ok(text(copy).endsWith(text(source)), `${copy} is ${source}`);
    }
  });

  it('reads GET /events as the service streams it: each event with its id, type and data, the retry hint', async () => {
    const t = await testApp(after, { config: { eventsRetryMs: 1234 } });
    const origin = await listen(t.app);
    const client = createClient({ baseUrl: origin, headers: { Authorization: `Bearer ${TOKEN}` } });
    const abort = new AbortController();
    after(() => abort.abort());
    const { response } = await client.GET('/events', { headers: { accept: 'text/event-stream' }, parseAs: 'stream', signal: abort.signal });
    assert.equal(response.status, 200);
    for (const body of ['{"id":1,"name":"Fern"}', '{"id":9223372036854775807,"name":"Big"}']) {
      assert.equal((await t.call('POST', '/plants', { body })).statusCode, 200);
    }
    assert.equal((await t.call('DELETE', '/plants/1')).statusCode, 204);

    const reader = new EventStreamReader();
    const all: ServerSentEvent[] = [];
    const isPlantEvent = (event: ServerSentEvent) => (EVENT_TYPES as readonly string[]).includes(event.type);
    const stream = response.body!.getReader();
    while (all.filter(isPlantEvent).length < 3) {
      const { value, done } = await stream.read();
      assert.equal(done, false, 'the stream ended early');
      all.push(...reader.push(value));
    }
    // The stream opens with its own `start` event; then the plants' events.
    assert.equal(all[0]!.type, 'start');
    const events = all.filter(isPlantEvent);
    abort.abort();
    assert.deepEqual(
      events.map((event) => event.type),
      ['plant.created', 'plant.created', 'plant.deleted'],
    );
    assert.match(events[1]!.data, /"data":\{"id":9223372036854775807,"name":"Big"\}/);
    for (const event of events) assert.match(event.lastEventId, /^msg_/);
    assert.equal(reader.lastEventId, events[2]!.lastEventId);
    assert.equal(reader.retry, 1234);
    // The ids are the feed's, in order: the JSON list of GET /events has the same.
    const listed = (await t.call('GET', '/events')).json();
    assert.deepEqual(
      events.map((event) => event.lastEventId),
      listed.map((event: { id: string }) => event.id),
    );
  });
});
