import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import { request, startServer, type ServerProcess } from '../process.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { openSource, type Received } from './sse.js';
import { needs, sleep, until } from '../toolkit.js';

/**
 * The change feed's promise under concurrent writers on two instances on one PostgreSQL database: a
 * consumer that is cut off again and again during the load, and reconnects (with Last-Event-ID) to one
 * instance or the other, ends with every committed change exactly once, in commit order: replaying its
 * events gives the store's final state, and each writer's changes come in the order it made them.
 */

const TOKEN = 'feed-instances-token-0123456789abc';
const WRITERS = 8;
const WRITES_PER_WRITER = 150;
/** Few plants, so that writers on both instances keep writing the same ones. */
const PLANTS = 20;

interface Outcome {
  name: string | undefined;
  kind: 'post' | 'patch' | 'delete';
  id: number;
  status: number;
}

/** One writer: `count` writes in turn through `instance`, each waiting for the one before, named w<writer>-<n>. */
async function writer(instance: ServerProcess, index: number, count: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let n = 0; n < count; n++) {
    const id = (index * 7 + n * 3) % PLANTS;
    const name = `w${index}-${n}`;
    const roll = (index + n * 5) % 10;
    let outcome: Outcome;
    if (roll < 6) {
      const tag = n % 3 === 0 ? `,"tag":"t${n}"` : '';
      const res = await request(`${instance.url}/plants`, { method: 'POST', token: TOKEN, body: `{"id":${id},"name":"${name}"${tag}}` });
      outcome = { name, kind: 'post', id, status: res.status };
    } else if (roll < 8) {
      const res = await request(`${instance.url}/plants/${id}`, { method: 'PATCH', token: TOKEN, body: `{"name":"${name}"}` });
      outcome = { name, kind: 'patch', id, status: res.status };
    } else {
      const res = await request(`${instance.url}/plants/${id}`, { method: 'DELETE', token: TOKEN });
      outcome = { name: undefined, kind: 'delete', id, status: res.status };
    }
    assert.ok([200, 204, 404, 503].includes(outcome.status), `${outcome.kind} ${id}: ${outcome.status}`);
    outcomes.push(outcome);
  }
  return outcomes;
}

interface Body {
  type: string;
  data: { id: number; name?: string; tag?: string };
}

const body = (event: Received): Body => JSON.parse(event.data) as Body;

const skipReason = needs('the change feed on two PostgreSQL instances', postgresUnavailableReason());

if (skipReason) {
  test('the change feed on two PostgreSQL instances', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);

  describe('the change feed on two instances of one PostgreSQL database', () => {
    it(
      'gives a consumer that resumes again and again, on either instance, every committed change exactly once, in commit order',
      { timeout: 300_000 },
      async (context) => {
        const url = await server.createDatabase();
        const env = { DATABASE_URL: url, PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '1', EVENTS_RETRY_MS: '20' };
        const [a, b] = await Promise.all([startServer(after, { env }), startServer(after, { env })]);
        const instances = [a, b];
        // Every reconnect goes to the other instance.
        const consumer = openSource(after, `${a.url}/events`, TOKEN, (target, n) => target.replace(a.url, instances[n % 2]!.url));
        await until(() => consumer.source.readyState === consumer.source.OPEN, 'the consumer to connect');

        let loading = true;
        const cutting = (async () => {
          while (loading) {
            await sleep(150 + Math.random() * 250);
            consumer.cut();
          }
        })();
        const outcomes = (await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(instances[i % 2]!, i, WRITES_PER_WRITER)))).flat();
        loading = false;
        await cutting;
        // A last write, on a plant of its own: any event sent twice comes before it on the stream, so once it is in, all are.
        const last = await request(`${b.url}/plants`, { method: 'POST', token: TOKEN, body: `{"id":${PLANTS},"name":"the last"}` });
        assert.equal(last.status, 200, last.text);
        outcomes.push({ name: 'the last', kind: 'post', id: PLANTS, status: 200 });

        // The feed as the API lists it, page by page.
        const listed: string[] = [];
        for (let next: string | undefined = '/events?limit=1000'; next;) {
          const res = await request(`${b.url}${next}`, { token: TOKEN });
          assert.equal(res.status, 200, res.text);
          listed.push(...(JSON.parse(res.text) as Array<{ id: string }>).map((e) => e.id));
          next = /^<([^>]+)>/.exec(res.headers.get('link') ?? '')?.[1];
        }
        const missing = () => {
          const got = new Set(consumer.received.map((e) => e.id));
          return listed.flatMap((id, i) => (got.has(id) ? [] : [i]));
        };
        await until(
          () => consumer.received.length >= listed.length,
          `the consumer's ${listed.length} events (it has ${consumer.received.length}, missing those at ${missing().join(', ')}; ` +
            `${consumer.connections.length} connections, Last-Event-IDs ${consumer.connections.map((h) => listed.indexOf(h['Last-Event-ID'] ?? '')).join(',')})`,
          { timeoutMs: 30_000 },
        );
        await until(() => consumer.received.some((event) => event.id === listed.at(-1)), 'the last write on the stream', { timeoutMs: 30_000 });
        context.diagnostic(
          `${outcomes.length} writes (${outcomes.filter((o) => o.status === 503).length} answered 503), ${listed.length} events, ` +
            `${consumer.connections.length} connections of the consumer`,
        );
        assert.ok(consumer.connections.length >= 10, `resumed again and again (${consumer.connections.length} connections)`);
        assert.ok(
          consumer.statuses.every((s) => s === 200),
          `every reconnect accepted: ${consumer.statuses.join(',')}`,
        );
        assert.deepEqual(
          consumer.received.map((e) => e.id),
          listed,
          'the consumer got every event exactly once, in the order of the feed',
        );

        // Exactly the acknowledged changes: each named write once, a delete per 204; a write answered 503 may or may not be there.
        const events = consumer.received.map(body);
        const named = events.filter((e) => e.type !== 'plant.deleted').map((e) => e.data.name!);
        assert.equal(new Set(named).size, named.length, 'no change twice');
        const acknowledged = outcomes.filter((o) => o.name !== undefined && o.status === 200).map((o) => o.name!);
        const uncertain = new Set(outcomes.filter((o) => o.status === 503).map((o) => o.name));
        assert.deepEqual(named.filter((name) => !uncertain.has(name)).sort(), acknowledged.sort());
        const deletes = outcomes.filter((o) => o.kind === 'delete');
        const deleted = events.filter((e) => e.type === 'plant.deleted').length;
        assert.ok(deleted >= deletes.filter((o) => o.status === 204).length && deleted <= deletes.filter((o) => o.status !== 404).length);

        // Commit order: each writer's changes in the order it made them, and the events replayed give the store's state.
        for (let w = 0; w < WRITERS; w++) {
          const own = named.filter((name) => name.startsWith(`w${w}-`)).map((name) => Number(name.split('-')[1]));
          assert.deepEqual(
            own,
            [...own].sort((x, y) => x - y),
            `writer ${w}'s changes in its order`,
          );
        }
        const replayed = new Map<number, string>();
        for (const event of events) {
          if (event.type === 'plant.deleted') replayed.delete(event.data.id);
          else replayed.set(event.data.id, JSON.stringify(event.data));
        }
        const stored = JSON.parse((await request(`${a.url}/plants?limit=1000`, { token: TOKEN })).text) as Array<{ id: number }>;
        assert.deepEqual(
          [...replayed.entries()].sort(([x], [y]) => x - y).map(([, plant]) => plant),
          stored.map((plant) => JSON.stringify(plant)),
          'the events, applied in order, give the plants as stored',
        );
      },
    );

    // The docs promise a write through another instance reaches a stream within EVENTS_POLL_MS (250 ms). The
    // bound asserted is forty times that: a loaded machine stalls either process for seconds at times, and it
    // still fails a follower that does not poll (it would never come) or polls far less often.
    it('gives a stream on one instance the writes made through the other, each within ten seconds (it polls every EVENTS_POLL_MS)', async (context) => {
      const url = await server.createDatabase();
      const env = { DATABASE_URL: url, PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '1' };
      const [a, b] = await Promise.all([startServer(after, { env }), startServer(after, { env })]);
      const onA = openSource(after, `${a.url}/events`, TOKEN);
      await until(() => onA.source.readyState === onA.source.OPEN, 'the stream on A');
      const lags: number[] = [];
      for (let i = 0; i < 5; i++) {
        const written = Date.now();
        assert.equal((await request(`${b.url}/plants`, { method: 'POST', token: TOKEN, body: `{"id":${i},"name":"via B"}` })).status, 200);
        await until(() => onA.received.length === i + 1, `write ${i} on A within ten seconds`, { timeoutMs: 10_000 });
        lags.push(Date.now() - written);
      }
      context.diagnostic(`a write through B reached a stream on A after ${lags.join(', ')} ms (EVENTS_POLL_MS 250)`);
      assert.deepEqual(
        onA.received.map((e) => body(e).data),
        Array.from({ length: 5 }, (_, id) => ({ id, name: 'via B' })),
      );
    });
  });
}
