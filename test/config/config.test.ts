import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/** Asserts that this environment stops the start with a one-line ConfigError naming the setting. */
function refuses(env: Record<string, string>, setting: string): ConfigError {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigError, `${JSON.stringify(env)} should be refused`);
  assert.equal(caught.setting, setting);
  assert.ok(caught.message.startsWith(`${setting}:`), caught.message);
  assert.ok(!caught.message.includes('\n'), 'one line');
  return caught;
}

describe('loadConfig', () => {
  it('has the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, 'file:./data/plant-store.db');
    assert.equal(config.bodyLimit, 65536);
    assert.deepEqual(config.tokens, []);
    assert.equal(config.logLevel, 'info');
  });

  it('treats empty values as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '', DATABASE_URL: '', BODY_LIMIT: '', PLANT_STORE_TOKENS: '', LOG_LEVEL: '' });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, 'file:./data/plant-store.db');
  });

  it('reads each setting', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      DATABASE_URL: 'file:/tmp/elsewhere.db',
      BODY_LIMIT: '2048',
      PLANT_STORE_TOKENS: ' one-token-0123456789abcdefghijklmnop , two.token~+/0123456789abcdefghijklmn= ',
      LOG_LEVEL: 'WARN',
    });
    assert.equal(config.port, 0);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.databaseUrl, 'file:/tmp/elsewhere.db');
    assert.equal(config.bodyLimit, 2048);
    assert.deepEqual(config.tokens, ['one-token-0123456789abcdefghijklmnop', 'two.token~+/0123456789abcdefghijklmn=']);
    assert.equal(config.logLevel, 'warn');
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u:p@localhost/db' }).databaseUrl, 'postgres://u:p@localhost/db');
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://localhost/db' }).databaseUrl, 'postgresql://localhost/db');
  });

  describe('refuses a bad value, naming the setting', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: 'abc' }, 'PORT'],
      [{ PORT: '70000' }, 'PORT'],
      [{ PORT: '-1' }, 'PORT'],
      [{ PORT: '80.5' }, 'PORT'],
      [{ PORT: '0x50' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'file:' }, 'DATABASE_URL'],
      [{ DATABASE_URL: './plants.db' }, 'DATABASE_URL'],
      // SQLite trims a file name; the service did not (a restore then replaced a decoy "x.db ").
      [{ DATABASE_URL: 'file:/tmp/x.db ' }, 'DATABASE_URL'],
      [{ DATABASE_URL: ' file:/tmp/x.db' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://u@h1/db\t' }, 'DATABASE_URL'],
      // A file: URL's query named no option (a store named "y.db?mode=ro"), or was dropped.
      [{ DATABASE_URL: 'file:/tmp/y.db?mode=ro' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'file:///tmp/y.db?mode=ro' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'file:/tmp/y.db#x' }, 'DATABASE_URL'],
      [{ BODY_LIMIT: 'x' }, 'BODY_LIMIT'],
      [{ BODY_LIMIT: '10' }, 'BODY_LIMIT'],
      [{ BODY_LIMIT: '64k' }, 'BODY_LIMIT'],
      [{ PLANT_STORE_TOKENS: 'a,,b' }, 'PLANT_STORE_TOKENS'],
      [{ PLANT_STORE_TOKENS: 'a,' }, 'PLANT_STORE_TOKENS'],
      [{ PLANT_STORE_TOKENS: 'has space' }, 'PLANT_STORE_TOKENS'],
      [{ PLANT_STORE_TOKENS: 'quote"d' }, 'PLANT_STORE_TOKENS'],
      [{ PLANT_STORE_TOKENS: 'a' }, 'PLANT_STORE_TOKENS'],
      [{ PLANT_STORE_TOKENS: 'abc, b' }, 'PLANT_STORE_TOKENS'],
      [{ PLANT_STORE_TOKENS: `${'t'.repeat(32)},${'u'.repeat(31)}` }, 'PLANT_STORE_TOKENS'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [{ DATABASE_URL: 'postgres://u@h1,,h2/db' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://u@h1:5432,h2:99999/db' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://u@[::1/db' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://u@h1,h2/db?target_session_attrs=sometimes' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://u@h1,h2/db?target_session_attrs=standby' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://u@h1/db', DATABASE_READ_URL: 'file:/tmp/x.db' }, 'DATABASE_READ_URL'],
      [{ DATABASE_URL: 'postgres://u@h1/db', DATABASE_READ_URL: 'postgres://u@r1:0/db' }, 'DATABASE_READ_URL'],
      [{ DATABASE_READ_URL: 'postgres://u@r1/db' }, 'DATABASE_READ_URL'],
      [{ READ_REPLICA_MAX_LAG_MS: '-1' }, 'READ_REPLICA_MAX_LAG_MS'],
      [{ PG_READ_POOL_SIZE: '-1' }, 'PG_READ_POOL_SIZE'],
      [{ PG_READ_POOL_SIZE: '1001' }, 'PG_READ_POOL_SIZE'],
      [{ PG_READ_POOL_SIZE: '2.5' }, 'PG_READ_POOL_SIZE'],
      [{ PG_READ_POOL_SIZE: 'four' }, 'PG_READ_POOL_SIZE'],
      [{ PG_POOL_SIZE: '0' }, 'PG_POOL_SIZE'],
      [{ WEBHOOK_DNS_TIMEOUT_MS: '0' }, 'WEBHOOK_DNS_TIMEOUT_MS'],
      [{ WEBHOOK_DNS_TIMEOUT_MS: '60001' }, 'WEBHOOK_DNS_TIMEOUT_MS'],
      [{ WEBHOOK_DNS_TIMEOUT_MS: '5s' }, 'WEBHOOK_DNS_TIMEOUT_MS'],
    ];
    for (const [env, setting] of cases) {
      it(JSON.stringify(env), () => {
        refuses(env, setting);
      });
    }
  });

  it('names the first bad setting even when others are fine', () => {
    refuses({ PORT: '8081', HOST: 'localhost', LOG_LEVEL: 'loud' }, 'LOG_LEVEL');
  });

  it('never puts a database password or a token in its message', () => {
    const url = refuses({ DATABASE_URL: 'mysql://admin:hunter2@db/x' }, 'DATABASE_URL');
    assert.ok(!url.message.includes('hunter2'), url.message);
    const token = refuses({ PLANT_STORE_TOKENS: 'good-token-0123456789abcdefghijklm,sec ret-token-0123456789abcdefghij' }, 'PLANT_STORE_TOKENS');
    assert.ok(!token.message.includes('sec ret-token'), token.message);
    const multi = refuses({ DATABASE_URL: 'postgres://admin:hun@ter2@h1:5432,h2:0/db?password=hunter3' }, 'DATABASE_URL');
    assert.ok(!/hun|ter2|hunter3/.test(multi.message.replace('DATABASE_URL', '')), multi.message);
    const encoding = refuses({ DATABASE_URL: 'postgres://admin:hunter%zz@h1,h2/db' }, 'DATABASE_URL');
    assert.ok(!encoding.message.includes('hunter'), encoding.message);
  });

  it('refuses a static token shorter than 32 characters, saying so without repeating it', () => {
    const short = refuses({ PLANT_STORE_TOKENS: `${'k'.repeat(40)},abc` }, 'PLANT_STORE_TOKENS');
    assert.match(short.message, /token 2 must be at least 32 characters long/);
    assert.ok(!short.message.includes('abc'), short.message);
    assert.deepEqual(loadConfig({ PLANT_STORE_TOKENS: 'k'.repeat(32) }).tokens, ['k'.repeat(32)]);
  });

  it('takes several PostgreSQL hosts, and replicas to read from', () => {
    const url = 'postgres://u:p@h1:5432,[::1]:5433,h3/plants?target_session_attrs=read-write&sslmode=require';
    const config = loadConfig({ DATABASE_URL: url, DATABASE_READ_URL: 'postgresql://u:p@r1,r2/plants', READ_REPLICA_MAX_LAG_MS: '1000' });
    assert.equal(config.databaseUrl, url);
    assert.equal(config.databaseReadUrl, 'postgresql://u:p@r1,r2/plants');
    assert.equal(config.readReplicaMaxLagMs, 1000);
    assert.equal(loadConfig({}).databaseReadUrl, '');
    assert.equal(loadConfig({}).readReplicaMaxLagMs, 5000);
  });

  it('keeps PostgreSQL connections for reads: a quarter of PG_POOL_SIZE by default, at least 2, or as set (0: none)', () => {
    assert.equal(loadConfig({}).pgPoolSize, 10);
    assert.equal(loadConfig({}).pgReadPoolSize, 3);
    assert.equal(loadConfig({ PG_POOL_SIZE: '40' }).pgReadPoolSize, 10);
    assert.equal(loadConfig({ PG_POOL_SIZE: '41' }).pgReadPoolSize, 11);
    assert.equal(loadConfig({ PG_POOL_SIZE: '1' }).pgReadPoolSize, 2);
    assert.equal(loadConfig({ PG_POOL_SIZE: '1', PG_READ_POOL_SIZE: '0' }).pgReadPoolSize, 0);
    assert.equal(loadConfig({ PG_POOL_SIZE: '40', PG_READ_POOL_SIZE: '1' }).pgReadPoolSize, 1);
    assert.equal(loadConfig({ PG_READ_POOL_SIZE: '1000' }).pgReadPoolSize, 1000);
  });
});

/** WEB_CONCURRENCY: how many processes serve (the workers themselves: test/process/workers.process.test.ts). */
describe('WEB_CONCURRENCY', () => {
  it('defaults to one process on SQLite and one per CPU on PostgreSQL', () => {
    assert.equal(loadConfig({}).webConcurrency, 1);
    assert.equal(loadConfig({ DATABASE_URL: 'file:/tmp/x.db' }).webConcurrency, 1);
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).webConcurrency, Math.min(availableParallelism(), 256));
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://u@h/db', WEB_CONCURRENCY: '3' }).webConcurrency, 3);
    assert.equal(loadConfig({ WEB_CONCURRENCY: '2' }).webConcurrency, 2);
  });

  it('refuses a bad value, naming the setting', () => {
    for (const bad of ['0', 'two', '-1', '257']) {
      assert.throws(
        () => loadConfig({ WEB_CONCURRENCY: bad }),
        (error: unknown) => error instanceof ConfigError && error.setting === 'WEB_CONCURRENCY',
      );
    }
  });
});
