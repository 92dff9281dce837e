import assert from 'node:assert/strict';
import type { after } from 'node:test';
import { sleep, until } from '../../../toolkit.js';
import { assertNoFailures, CheckedCalls, type Call } from './checked-calls.js';
import { FeedConsumer, type Failure } from './feed-consumer.js';
import { readExport, readFeed } from './store-reads.js';
import { connectTo, type Answer, type Origin, type Transport } from './transport.js';

/**
 * Steady load through a balancer while instances are restarted or upgraded, as an operator's clients put
 * it: 12 connections, each a client of its own, with a pause between its requests (a load that keeps
 * requests in flight at every moment of a deploy without taking the shared machine's two cores):
 * - 4 writers: POST /plants without a key; with `mix: 'every-write'` they go round POST, PUT then PATCH,
 *   an import of two plants, and PUT then DELETE;
 * - 4 keyed writers: POST /plants with an Idempotency-Key (with 'every-write' every third a keyed import),
 *   and every third request the replay of an earlier keyed request, which must be answered byte for byte;
 * - 3 readers: GET /plants/{id} of acknowledged plants, exactly as acknowledged (with 'every-write', every
 *   tenth round a token made over the API, used, and revoked);
 * - 1 change feed consumer (feed-consumer.ts).
 * Any request not answered as expected is a failure, with what it was and what came back (checked-calls.ts).
 */

export type Mix = 'plain' | 'every-write';

/** The pause between two requests of one connection. */
const PACE_MS = 25;

interface Keyed {
  call: Call;
  answer: Answer;
}

export class Load {
  readonly failures: Failure[] = [];
  /** Requests an HTTP/2 connection sent again because the server had not processed them (transport.ts). */
  resent = 0;
  /** Requests sent, by what they were. */
  readonly counts: Map<string, number>;
  /** Acknowledged plants by id: the object GET answers. */
  private readonly plants = new Map<string, { id: number; name: string; tag: string }>();
  private readonly deleted = new Set<string>();
  private readonly keyed: Keyed[] = [];
  /** Keys being replayed now: two requests with one key at once are 409 by design, so a key is replayed by one loop at a time. */
  private readonly replaying = new Set<Keyed>();
  /** Events the acknowledged writes made (a replay makes none). */
  private events = 0;
  private readonly feed: FeedConsumer;
  private readonly calls: CheckedCalls;
  private readonly clients: Transport[] = [];
  private loops: Array<Promise<void>> = [];
  private stopped = false;
  /** Set while the load is paused (whilePaused); the loops' requests in flight now. */
  private paused: Promise<void> | undefined;
  private busy = 0;

  constructor(
    cleanup: typeof after,
    private readonly to: Origin,
    private readonly mix: Mix,
  ) {
    this.calls = new CheckedCalls(to, this.failures);
    this.counts = this.calls.counts;
    this.feed = new FeedConsumer(to, this.failures);
    // Whatever happened (a failed assertion included), nothing of the load outlives the test.
    cleanup(async () => {
      await this.stop();
      await this.feed.stop();
    });
  }

  get requests(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0) + this.feed.connections;
  }

  /** Starts the feed's consumer (before any write, so that it must receive every event), then the rest. */
  async start(): Promise<void> {
    await this.feed.start();
    const loops = [
      ...[0, 1, 2, 3].map((i) => (client: Transport) => this.writer(client, i)),
      ...[4, 5, 6, 7].map((i) => (client: Transport) => this.keyedWriter(client, i)),
      ...[8, 9, 10].map((i) => (client: Transport) => this.reader(client, i)),
    ];
    this.loops = loops.map((loop) => {
      const client = connectTo(this.to);
      this.clients.push(client);
      return loop(client);
    });
  }

  /** Stops sending; the consumer goes on until verify() has seen it catch up. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
    const clients = this.clients.splice(0);
    for (const client of clients) this.resent += client.resent;
    await Promise.all(clients.map((client) => client.close()));
  }

  /**
   * Runs `step` again and again with a pause between, until stop(); a step waits at its start while the
   * load is paused (whilePaused).
   */
  private async repeat(step: (n: number) => Promise<void>): Promise<void> {
    for (let n = 0; !this.stopped; n++) {
      await this.paused;
      this.busy++;
      try {
        await step(n);
      } finally {
        this.busy--;
      }
      await sleep(PACE_MS);
    }
  }

  /**
   * Runs `work` with no request of the load in flight: the loops wait at their next step until it is done.
   * For what races the load by design (an endpoint deleted under writes: see cross-version.ts).
   */
  async whilePaused<T>(work: () => Promise<T>): Promise<T> {
    let resume = () => {};
    this.paused = new Promise<void>((resolve) => (resume = resolve));
    try {
      await until(() => this.busy === 0, 'the load to pause', { timeoutMs: 30_000 });
      return await work();
    } finally {
      this.paused = undefined;
      resume();
    }
  }

  private writer(client: Transport, loop: number): Promise<void> {
    return this.repeat(async (n) => {
      const id = plantId(loop, n);
      const step = this.mix === 'plain' ? 0 : n % 4;
      if (step === 0) {
        const plant = { id: Number(id), name: `p${id}`, tag: 'posted' };
        if (
          await this.calls.send(client, 'POST /plants', { method: 'POST', path: '/plants', body: JSON.stringify(plant) }, 200, {
            name: plant.name,
            tag: plant.tag,
          })
        )
          this.acknowledge(plant, 1);
      } else if (step === 1) {
        const put = { name: `p${id}`, tag: 'put' };
        if (
          !(await this.calls.send(client, 'PUT /plants/{id}', { method: 'PUT', path: `/plants/${id}`, body: JSON.stringify(put) }, 201, {
            id: Number(id),
            ...put,
          }))
        )
          return;
        this.events++;
        const patched = { id: Number(id), name: put.name, tag: 'patched' };
        const patch = {
          method: 'PATCH',
          path: `/plants/${id}`,
          body: '{"tag":"patched"}',
          headers: { 'content-type': 'application/merge-patch+json' },
        };
        if (await this.calls.send(client, 'PATCH /plants/{id}', patch, 200, patched)) this.acknowledge(patched, 1);
      } else if (step === 2) {
        const rows = [0, 1].map((k) => ({ id: Number(id) + k * 500_000, name: `i${id}-${k}`, tag: 'imported' }));
        const body = rows.map((row) => JSON.stringify(row)).join('\n');
        const call = { method: 'POST', path: '/plants/import', body, headers: { 'content-type': 'application/x-ndjson' } };
        if (await this.calls.send(client, 'POST /plants/import', call, 200, { created: 2, replaced: 0 }))
          for (const row of rows) this.acknowledge(row, 1);
      } else {
        const call = { method: 'PUT', path: `/plants/${id}`, body: `{"name":"d${id}"}` };
        if (!(await this.calls.send(client, 'PUT /plants/{id}', call, 201, { id: Number(id), name: `d${id}` }))) return;
        this.events++;
        if (await this.calls.send(client, 'DELETE /plants/{id}', { method: 'DELETE', path: `/plants/${id}` }, 204)) {
          this.events++;
          this.deleted.add(id);
        }
      }
    });
  }

  private keyedWriter(client: Transport, loop: number): Promise<void> {
    return this.repeat(async (n) => {
      const earlier = this.keyed[Math.floor(Math.random() * this.keyed.length)];
      if (n % 3 === 2 && earlier && !this.replaying.has(earlier)) {
        this.replaying.add(earlier);
        const answer = await this.calls.call(client, 'replay of a keyed POST', earlier.call);
        this.replaying.delete(earlier);
        if (
          answer &&
          (answer.status !== earlier.answer.status || answer.text !== earlier.answer.text || answer.headers['idempotent-replayed'] !== 'true')
        )
          this.calls.fail(
            'replay of a keyed POST',
            earlier.call,
            `${answer.status} ${answer.text} (replayed: ${String(answer.headers['idempotent-replayed'])}); first answered ${earlier.answer.status} ${earlier.answer.text}`,
          );
      } else if (this.mix === 'every-write' && n % 3 === 1) {
        const id = plantId(loop, n);
        const row = { id: Number(id), name: `k${id}`, tag: 'keyed-import' };
        const call = {
          method: 'POST',
          path: '/plants/import',
          body: JSON.stringify(row),
          headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': `import-${id}` },
        };
        const answer = await this.calls.send(client, 'keyed POST /plants/import', call, 200, { created: 1, replaced: 0 });
        if (answer) {
          this.acknowledge(row, 1);
          this.keyed.push({ call, answer });
        }
      } else {
        const id = plantId(loop, n);
        const plant = { id: Number(id), name: `k${id}`, tag: 'keyed' };
        const call = { method: 'POST', path: '/plants', body: JSON.stringify(plant), headers: { 'idempotency-key': `plant-${id}` } };
        const answer = await this.calls.send(client, 'keyed POST /plants', call, 200, { name: plant.name, tag: plant.tag });
        if (answer) {
          this.acknowledge(plant, 1);
          this.keyed.push({ call, answer });
        }
      }
    });
  }

  private reader(client: Transport, loop: number): Promise<void> {
    return this.repeat(async (n) => {
      if (this.mix === 'every-write' && n % 10 === 9) await this.tokenRound(client, loop, n);
      const ids = [...this.plants.keys()];
      const id = ids[Math.floor(Math.random() * ids.length)];
      if (id !== undefined) await this.calls.send(client, 'GET /plants/{id}', { method: 'GET', path: `/plants/${id}` }, 200, this.plants.get(id));
    });
  }

  /** A token made over the API (with a key), used at once through the balancer (either instance), and revoked. */
  private async tokenRound(client: Transport, loop: number, n: number): Promise<void> {
    const name = `load-${loop}-${n}`;
    const make = {
      method: 'POST',
      path: '/tokens',
      body: JSON.stringify({ name, scopes: ['plants:read'] }),
      headers: { 'idempotency-key': `token-${name}` },
    };
    const made = await this.calls.send(client, 'POST /tokens', make, 201);
    if (!made) return;
    const token = JSON.parse(made.text) as { id: string; secret: string };
    await this.calls.send(client, 'GET /plants?limit=1 (a new token)', { method: 'GET', path: '/plants?limit=1', token: token.secret }, 200);
    await this.calls.send(client, 'DELETE /tokens/{id}', { method: 'DELETE', path: `/tokens/${token.id}` }, 204);
  }

  private acknowledge(plant: { id: number; name: string; tag: string }, events: number): void {
    this.plants.set(String(plant.id), plant);
    this.events += events;
  }

  /**
   * After stop(): no request failed; every acknowledged plant is stored as acknowledged (the store's whole
   * export, read through `origin`), the deleted ones are not; the feed's consumer received every event of
   * the feed once, in the feed's order, and the feed holds one event per acknowledged change
   * (`extraEvents`: changes made besides the load).
   */
  async verify(extraEvents = 0): Promise<{ requests: number; resent: number; plants: number; events: number }> {
    assertNoFailures(this.failures, this.requests);
    const verifier = connectTo(this.to);
    try {
      const stored = await readExport(verifier, this.to.token);
      for (const [id, plant] of this.plants) assert.deepEqual(stored.get(id), plant, `acknowledged plant ${id}`);
      for (const id of this.deleted) assert.equal(stored.get(id), undefined, `deleted plant ${id}`);
      const feed = await readFeed(verifier, this.to.token);
      await this.feed.caughtUp(feed.at(-1));
      await this.feed.stop();
      assertNoFailures(this.failures, this.requests);
      assert.equal(new Set(this.feed.ids).size, this.feed.ids.length, 'no event delivered twice to the stream');
      assert.deepEqual(this.feed.ids, feed, "the stream's events are the feed's, in its order");
      assert.equal(feed.length, this.events + extraEvents, 'one event per acknowledged change');
      return { requests: this.requests, resent: this.resent + this.feed.resent, plants: this.plants.size, events: feed.length };
    } finally {
      await verifier.close();
    }
  }
}

/** Ids unique to a loop and a round: 10^9 per loop. */
function plantId(loop: number, n: number): string {
  return String((loop + 1) * 1_000_000_000 + n);
}
