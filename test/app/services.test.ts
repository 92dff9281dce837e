import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import { Lifecycle, runWithApp, type DrainReason, type Service } from '../../src/app/services.js';

/** The one lifecycle: services start in the list's order and stop in the reverse one, in phases. */

/** A service that writes what happens to it into `said`. */
function service(name: string, said: string[], extra: Partial<Service> = {}): Service {
  return {
    name,
    start: () => void said.push(`start ${name}`),
    stop: () => void said.push(`stop ${name}`),
    ...extra,
  };
}

describe('Lifecycle', () => {
  test('starts in order, stops in the reverse order, those marked stopsFirst before all the others', async () => {
    const said: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start(service('a', said), service('streams', said, { stopsFirst: true }), service('b', said));
    assert.equal(await lifecycle.stop(() => assert.fail('no failure')), true);
    assert.deepEqual(said, ['start a', 'start streams', 'start b', 'stop streams', 'stop b', 'stop a']);
  });

  test('stops one phase at a time, and each service once', async () => {
    const said: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start(service('a', said), service('streams', said, { stopsFirst: true }));
    await lifecycle.stop(() => undefined, 'first');
    assert.deepEqual(said.slice(2), ['stop streams']);
    await lifecycle.stop(() => undefined, 'rest');
    await lifecycle.stop(() => undefined);
    assert.deepEqual(said.slice(2), ['stop streams', 'stop a']);
  });

  test('a service that fails to stop is reported, the others still stop, and the stop answers false', async () => {
    const said: string[] = [];
    const failures: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start(
      service('store', said),
      service('deliveries', said, {
        stop: () => Promise.reject(new Error('would not stop')),
      }),
      service('listener', said),
    );
    const clean = await lifecycle.stop((name, error) => failures.push(`${name}: ${(error as Error).message}`));
    assert.equal(clean, false);
    assert.deepEqual(failures, ['deliveries: would not stop']);
    assert.deepEqual(said.slice(3), ['stop listener', 'stop store']);
  });

  test('a service that fails to start is not kept: stopping stops those started before it', async () => {
    const said: string[] = [];
    const lifecycle = new Lifecycle();
    await assert.rejects(
      lifecycle.start(
        service('store', said),
        service('listener', said, { start: () => Promise.reject(new Error('port in use')) }),
        service('never', said),
      ),
      /port in use/,
    );
    await lifecycle.stop(() => undefined);
    assert.deepEqual(said, ['start store', 'stop store']);
  });

  test('drain: every running service with a drain at once, told why; a failing one is reported', async () => {
    const reasons: DrainReason[] = [];
    let both = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waiting: Service = {
      name: 'listener',
      drain: async (reason) => {
        reasons.push(reason);
        both++;
        await gate;
      },
    };
    const other: Service = {
      name: 'other',
      drain: (reason) => {
        reasons.push(reason);
        both++;
        release();
      },
    };
    const failing: Service = { name: 'failing', drain: () => Promise.reject(new Error('no')) };
    const lifecycle = new Lifecycle();
    await lifecycle.start(waiting, { name: 'no drain' }, other, failing);
    const failures: string[] = [];
    const clean = await lifecycle.drain('leaving', (name) => failures.push(name));
    assert.equal(both, 2, 'both drains ran, the second while the first waited');
    assert.deepEqual(reasons, ['leaving', 'leaving']);
    assert.equal(clean, false);
    assert.deepEqual(failures, ['failing']);
  });
});

describe('runWithApp', () => {
  test('starts the services when the app is ready; stopsFirst ones as it begins to close, before the requests in flight end; the others after', async () => {
    const said: string[] = [];
    const app = Fastify();
    let finish: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    app.get('/slow', () => {
      arrived();
      return new Promise<string>((resolve) => (finish = () => resolve('done')));
    });
    let streamsStopped: () => void = () => undefined;
    const streamsStop = new Promise<void>((resolve) => (streamsStopped = resolve));
    const streams = service('streams', said, { stopsFirst: true });
    runWithApp(app, [service('timer', said), { ...streams, stop: () => (void streams.stop?.(), streamsStopped()) }]);
    await app.listen({ port: 0, host: '127.0.0.1' });
    assert.deepEqual(said, ['start timer', 'start streams']);
    const port = (app.server.address() as { port: number }).port;
    const answer = fetch(`http://127.0.0.1:${port}/slow`).then((response) => response.text());
    await inFlight;
    const closed = app.close();
    await streamsStop;
    assert.deepEqual(said.slice(2), ['stop streams'], 'the streams stop first, the timer waits for the request in flight');
    finish();
    assert.equal(await answer, 'done');
    await closed;
    assert.deepEqual(said.slice(2), ['stop streams', 'stop timer']);
  });

  test('a service that fails to stop fails the close, after the others stopped', async () => {
    const said: string[] = [];
    const app = Fastify();
    runWithApp(app, [service('a', said), service('b', said, { stop: () => Promise.reject(new Error('stuck')) })]);
    await app.ready();
    await assert.rejects(app.close(), /b: stuck/);
    assert.deepEqual(said, ['start a', 'start b', 'stop a']);
  });
});
