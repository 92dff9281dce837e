import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { POSTGRES_MIGRATIONS } from '../../../../src/store/postgres/migrations.js';
import { VERSION } from '../../../../src/version.js';
import { request } from '../../../process.js';
import { needs, until } from '../../../toolkit.js';
import { Receiver } from '../../../webhooks/receiver.js';
import { freePort, postgresUnavailableReason, TestPostgres } from '../pg-server.js';
import { balancerUnavailableReason, startBalancer } from './balancers.js';
import { CrossVersion } from './cross-version.js';
import { Instance, roll, THIS_CHECKOUT } from './fleet.js';
import { Load } from './load.js';
import { readFeed } from './store-reads.js';
import { connectTo, type Origin } from './transport.js';
import { buildRelease, PREVIOUS_RELEASE, previousReleaseUnavailableReason } from './previous-release.js';

/**
 * The check every migration must pass: a rolling upgrade from the previous release (PREVIOUS_RELEASE,
 * built from git) to this checkout on one PostgreSQL database, behind docs/production.md's HAProxy, under
 * load (load.ts, every kind of write). The first instance upgraded migrates the schema while the second
 * still runs the previous release: every kind of write made through either is read, replayed and undone
 * through the other (cross-version.ts), and the previous release must have answered every kind of request
 * of the load on the migrated schema before the second is upgraded. Holds: no request failed, every
 * acknowledged plant is stored, the change feed's consumer got every event once, the webhook endpoint
 * registered through the previous release got every event, signed.
 */

const TOKEN = 'rolling-upgrade-token-0123456789abcdef';
const skip = needs(
  'the rolling upgrade from the previous release',
  postgresUnavailableReason() ?? balancerUnavailableReason('haproxy') ?? previousReleaseUnavailableReason(),
);
const server = skip ? undefined : await TestPostgres.start(after);

/** Each kind of request of the load, as the access log shows it answered: the previous release must serve every one on the migrated schema. */
const KINDS: Record<string, RegExp> = {
  'POST /plants': /"method":"POST","url":"\/plants","status":200/,
  'GET /plants/{id}': /"method":"GET","url":"\/plants\/\d+","status":200/,
  'PUT /plants/{id}': /"method":"PUT","url":"\/plants\/\d+","status":201/,
  'PATCH /plants/{id}': /"method":"PATCH","url":"\/plants\/\d+","status":200/,
  'DELETE /plants/{id}': /"method":"DELETE","url":"\/plants\/\d+","status":204/,
  'POST /plants/import': /"method":"POST","url":"\/plants\/import","status":200/,
  'POST /tokens': /"method":"POST","url":"\/tokens","status":201/,
  'a new token used': /"method":"GET","url":"\/plants\?limit=1","status":200/,
  'DELETE /tokens/{id}': /"method":"DELETE","url":"\/tokens\/[^"]+","status":204/,
};

describe(`a rolling upgrade from the previous release (${PREVIOUS_RELEASE.version}, ${PREVIOUS_RELEASE.commit.slice(0, 7)})`, { skip }, () => {
  test('fails no request and loses nothing, each release working on the migrated schema beside the other', async () => {
    const started = Date.now();
    const previous = await buildRelease();
    process.stderr.write(
      `rolling upgrade: the previous release, ${previous.name}, built from git, ${previous.note ?? "runs on this checkout's node_modules: its runtime dependencies are the same (package-lock.json)"}\n`,
    );
    const built = Date.now();
    const receiver = await Receiver.start(after);
    const databaseUrl = await server!.createDatabase();
    // PAGE_LINKS=1.0: the new release's Links in the old one's forms while both run (docs/upgrading.md); the old one ignores it.
    const env = {
      DATABASE_URL: databaseUrl,
      PLANT_STORE_TOKENS: TOKEN,
      WEB_CONCURRENCY: '1',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      PAGE_LINKS: '1.0',
    };
    const instances = [new Instance('a', await freePort(), env, after), new Instance('b', await freePort(), env, after)] as const;
    // The fleet as it runs today: the previous release, which made the schema.
    for (const instance of instances) await instance.start(previous);
    const endpoint = await request(`${instances[0].url}/webhooks`, { method: 'POST', token: TOKEN, body: JSON.stringify({ url: receiver.url }) });
    assert.equal(endpoint.status, 201, endpoint.text);
    const { secret } = JSON.parse(endpoint.text) as { secret: string };

    const balancer = await startBalancer(
      after,
      'haproxy',
      instances.map((instance) => instance.port),
    );
    const load = new Load(after, { ...balancer, token: TOKEN }, 'every-write');
    await load.start();
    for (const instance of instances) await instance.inRotation();
    const probes = new CrossVersion(TOKEN, `${receiver.url}/probe`, (work) => load.whilePaused(work));
    // The probes hold between two instances of the previous release, before anything changes.
    await probes.across(instances[0], instances[1]);

    await roll(instances, THIS_CHECKOUT, balancer, async (upgraded, index) => {
      if (index !== 0) return;
      const [, old] = instances;
      assert.equal(old.release, previous, 'the second instance still runs the previous release');
      const applied = await appliedVersions(databaseUrl);
      assert.deepEqual(
        applied,
        POSTGRES_MIGRATIONS.map((m) => m.version),
        "the first instance of this checkout migrated the schema to this checkout's",
      );
      const mark = old.log.length;
      await probes.across(upgraded, old);
      await probes.across(old, upgraded);
      await until(
        () => Object.values(KINDS).every((kind) => kind.test(old.logSince(mark))),
        'the previous release to answer every kind of request through the balancer on the migrated schema',
        { timeoutMs: 60_000 },
      ).catch(() => {
        const missing = Object.entries(KINDS).filter(([, kind]) => !kind.test(old.logSince(mark)));
        throw new Error(
          `the previous release answered no ${missing.map(([name]) => name).join(', ')} on the migrated schema:\n${old.logSince(mark).slice(-3000)}`,
        );
      });
    });
    await probes.across(instances[1], instances[0]);

    await load.stop();
    const report = await load.verify(probes.events).catch((error: unknown) => {
      const logs = instances.flatMap((instance) =>
        instance.history.map((run) => `--- ${instance.name} (${run.release}):\n${run.output.slice(-3000)}`),
      );
      const streams = balancer
        .output()
        .split('\n')
        .filter((line) => line.includes('GET /events HTTP'));
      const errors = instances.flatMap((instance) => instance.errors);
      throw new Error(
        `${String(error)}\n--- errors the instances logged:\n${errors.join('\n')}\n${logs.join('\n')}\n--- haproxy's event streams:\n${streams.join('\n')}`,
      );
    });

    // Every event reached the endpoint registered through the previous release, signed with its secret,
    // whichever release sent it (at least once: a delivery may be repeated, as webhooks are).
    const feed = await readFeedOf({ ...balancer, token: TOKEN });
    const delivered = new Set<string>();
    await until(
      () => {
        for (const delivery of receiver.received.splice(0)) {
          try {
            new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
            delivered.add(String(delivery.headers['webhook-id']));
          } catch {
            // A probe's endpoint (another secret): not this one's.
          }
        }
        return feed.every((id) => delivered.has(id));
      },
      'every event delivered to the webhook endpoint',
      { timeoutMs: 60_000 },
    ).catch(() => {
      throw new Error(`${feed.filter((id) => !delivered.has(id)).length} of ${feed.length} events never delivered to the endpoint`);
    });

    // Both instances now say they run this release (the previous one did not register: it predates the registry).
    const registered = await registeredReleases(databaseUrl);
    assert.deepEqual(registered, [VERSION, VERSION]);
    process.stderr.write(
      `rolling upgrade ${previous.name} -> ${VERSION}: ${JSON.stringify(report)}; built in ${built - started} ms, all in ${Date.now() - started} ms\n`,
    );
  });
});

async function appliedVersions(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => row.version);
  } finally {
    await client.end();
  }
}

async function registeredReleases(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ release: string }>('SELECT release FROM instances ORDER BY release')).rows.map((row) => row.release);
  } finally {
    await client.end();
  }
}

async function readFeedOf(to: Origin): Promise<string[]> {
  const client = connectTo(to);
  try {
    return await readFeed(client, to.token);
  } finally {
    await client.close();
  }
}
