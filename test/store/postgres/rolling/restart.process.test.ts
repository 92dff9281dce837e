import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { freePort, postgresUnavailableReason, TestPostgres } from '../pg-server.js';
import { balancerUnavailableReason, startBalancer, type BalancerKind } from './balancers.js';
import { Instance, roll, THIS_CHECKOUT } from './fleet.js';
import { Load } from './load.js';
import { needs } from '../../../toolkit.js';

/**
 * A rolling restart nobody notices, behind each balancer docs/production.md configures: two instances of
 * this checkout on one PostgreSQL database behind the page's HAProxy, then its nginx, under steady load
 * (load.ts: 12 connections), each instance stopped with SIGTERM and started again in turn. Holds: no request
 * failed, every acknowledged plant is read back, the change feed's consumer got every event once.
 */

const TOKEN = 'rolling-restart-token-0123456789abcdef';
const pgSkip = postgresUnavailableReason();
const server = pgSkip ? undefined : await TestPostgres.start(after);

for (const kind of ['haproxy', 'nginx'] as const satisfies readonly BalancerKind[]) {
  const skip = needs(`the rolling restart behind ${kind}`, pgSkip ?? balancerUnavailableReason(kind));
  describe(`a rolling restart behind ${kind}`, { skip }, () => {
    test('fails no request, loses nothing, delivers every event once', async () => {
      const started = Date.now();
      const env = { DATABASE_URL: await server!.createDatabase(), PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '1' };
      const instances = [new Instance('a', await freePort(), env, after), new Instance('b', await freePort(), env, after)];
      await Promise.all(instances.map((instance) => instance.start(THIS_CHECKOUT)));
      const balancer = await startBalancer(
        after,
        kind,
        instances.map((instance) => instance.port),
      );
      const load = new Load(after, { ...balancer, token: TOKEN }, 'plain');
      await load.start();
      for (const instance of instances) await instance.inRotation();

      await roll(instances, THIS_CHECKOUT, balancer);
      await load.stop();
      const report = await load.verify().catch((error: unknown) => {
        const errors = instances.flatMap((instance) => instance.errors);
        throw new Error(
          `${String(error)}\n--- errors the instances logged:\n${errors.join('\n')}\n--- ${kind} said:\n${balancer.output().slice(-4000)}`,
        );
      });
      assert.ok(report.requests > 500, `a load worth the name: ${report.requests} requests`);
      process.stderr.write(`rolling restart behind ${kind}: ${JSON.stringify(report)} in ${Date.now() - started} ms\n`);
    });
  });
}
