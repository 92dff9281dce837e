import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createClient, followEvents, type ServerSentEvent } from '@plant-store/client';
import { listen } from '../events/sse.js';
import { testApp, TOKEN } from '../helpers.js';

/** The client package's change feed follower (follow.test.ts holds its policy) once against the real service. */
describe('the change feed follower against the service', () => {
  // A bound, where an event that never came would otherwise hold the run: it takes 1–2 s, loaded or not.
  it('gets each event as it commits, with its id, from the position it was told to start after', { timeout: 60_000 }, async () => {
    const t = await testApp(after);
    const origin = await listen(t.app);
    const client = createClient({ baseUrl: origin, headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal((await t.call('POST', '/plants', { body: { id: 1, name: 'Before' } })).statusCode, 200);
    const first = (await t.call('GET', '/events')).json<Array<{ id: string }>>()[0]!.id;
    const abort = new AbortController();
    const received: ServerSentEvent[] = [];
    let arrived: () => void = () => undefined;
    const both = new Promise<void>((resolve) => (arrived = resolve));
    const states: string[] = [];
    const done = followEvents(client, {
      after: first,
      signal: abort.signal,
      onState: (state) => states.push(state.kind === 'reconnecting' ? `reconnecting: ${state.reason}` : state.kind),
      onEvent(event) {
        if (event.type !== 'plant.created' && event.type !== 'plant.deleted') return;
        received.push(event);
        if (received.length === 2) arrived();
      },
    });
    assert.equal((await t.call('POST', '/plants', { body: '{"id":9223372036854775807,"name":"Big"}' })).statusCode, 200);
    assert.equal((await t.call('DELETE', '/plants/1')).statusCode, 204);
    // A follower that ends (a FollowError) before both events came fails the test with why, where awaiting
    // the events alone would wait for ever (a run of the fast tier hung here once, the follower's end unseen).
    const ended = done.then(
      () => Promise.reject(new Error(`the follower ended before both events came; its states: ${states.join(', ')}`)),
      (error: unknown) =>
        Promise.reject(new Error(`the follower failed before both events came (${String(error)}); its states: ${states.join(', ')}`)),
    );
    ended.catch(() => undefined);
    await Promise.race([both, ended]);
    abort.abort();
    await done;
    const listed = (await t.call('GET', `/events?after=${first}`)).json<Array<{ id: string; type: string }>>();
    assert.deepEqual(
      received.map((e) => [e.lastEventId, e.type]),
      listed.map((e) => [e.id, e.type]),
    );
    assert.match(received[0]!.data, /"id":9223372036854775807/);
  });
});
