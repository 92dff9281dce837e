import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bootstrapToken, warnWithoutTokens } from '../../src/auth/bootstrap.js';
import { openSqlite, tempDir } from '../helpers.js';

/**
 * What the first start says about tokens names the store the CLI must make them in: the CLI works on the
 * store DATABASE_URL names, so a `plant-store token create` run without the server's DATABASE_URL beside a
 * server on PostgreSQL made its token in a SQLite file no server reads, and the server answered 401.
 */
describe('the first-start token message', () => {
  const dir = tempDir(after);

  async function firstStart(databaseUrl: string, listen = { host: '127.0.0.1', port: 8080 }): Promise<string> {
    const store = openSqlite(mkdtempSync(join(dir, 'store-')));
    try {
      const printed: string[] = [];
      await bootstrapToken(store, { tokens: [], databaseUrl, ...listen }, (text) => printed.push(text));
      assert.equal(printed.length, 1);
      return printed[0]!;
    } finally {
      await store.close();
    }
  }

  it('gives first the command that makes a token through the running server, which cannot miss its store', async () => {
    const text = await firstStart('file:./data/plant-store.db');
    const secret = /^ {4}(ps_\S+)$/m.exec(text)?.[1];
    assert.ok(secret, text);
    const through = text.indexOf(
      `    PLANT_STORE_TOKEN=${secret} npx plant-store token create --url http://127.0.0.1:8080 --name <name> --scope plants:read\n`,
    );
    const inStore = text.indexOf("    DATABASE_URL='file:");
    assert.ok(through > 0 && through < inStore, text);
    assert.match(text, /through this server \(from any folder or machine that reaches it\):\n\n/);
    assert.match(text, /\nor on this host, in this server's store:\n\n/);
  });

  it('names the address a command on this host reaches: loopback for a wildcard HOST, a placeholder for PORT=0', async () => {
    const at = async (host: string, port: number) => /--url (\S+) /.exec(await firstStart('file:./x.db', { host, port }))?.[1];
    assert.equal(await at('0.0.0.0', 8080), 'http://127.0.0.1:8080');
    assert.equal(await at('::', 9000), 'http://[::1]:9000');
    assert.equal(await at('fd00::5', 8080), 'http://[fd00::5]:8080');
    assert.equal(await at('plants.internal', 8080), 'http://plants.internal:8080');
    assert.equal(await at('127.0.0.1', 0), 'http://127.0.0.1:<port>');
  });

  it('gives the command that makes a token in a SQLite store, by its absolute path', async () => {
    const text = await firstStart('file:./data/plant-store.db');
    assert.match(text, /^ {4}ps_\S+$/m);
    const absolute = join(process.cwd(), 'data', 'plant-store.db');
    assert.ok(text.includes(`    DATABASE_URL='file:${absolute}' npx plant-store token create --name <name> --scope plants:read\n`), text);
    assert.doesNotMatch(text, /\*\*\*/);
  });

  it('gives the PostgreSQL URL on PostgreSQL, its password left out and said so', async () => {
    const text = await firstStart('postgres://plants:s3cret-pw@db.example:5432/plants?sslmode=require');
    assert.ok(
      text.includes(
        `    DATABASE_URL='postgres://plants:***@db.example:5432/plants?sslmode=require' npx plant-store token create --name <name> --scope plants:read\n`,
      ),
      text,
    );
    assert.match(text, /in this server's store \(with the password in place of \*\*\*\):/);
    assert.match(text, /--url http:\/\/127\.0\.0\.1:8080 /, 'through the server, whatever its store');
    assert.doesNotMatch(text, /s3cret-pw/);
  });

  it('prints nothing with a static token configured, or once a token exists', async () => {
    const store = openSqlite(mkdtempSync(join(dir, 'store-')));
    try {
      const printed: string[] = [];
      await bootstrapToken(
        store,
        { tokens: ['static-token-0123456789abcdefghijklmnop'], databaseUrl: 'file:./x.db', host: '127.0.0.1', port: 8080 },
        (text) => printed.push(text),
      );
      assert.equal(printed.length, 0);
      await bootstrapToken(store, { tokens: [], databaseUrl: 'file:./x.db', host: '127.0.0.1', port: 8080 }, (text) => printed.push(text));
      await bootstrapToken(store, { tokens: [], databaseUrl: 'file:./x.db', host: '127.0.0.1', port: 8080 }, (text) => printed.push(text));
      assert.equal(printed.length, 1);
    } finally {
      await store.close();
    }
  });

  it('says the same of PostgreSQL when every token is revoked', async () => {
    const store = openSqlite(mkdtempSync(join(dir, 'store-')));
    try {
      const printed: string[] = [];
      const config = { tokens: [], jwtJwksUrl: '', jwtPublicKey: '', jwtSecret: '', databaseUrl: 'postgres://plants:pw@db1,db2/plants' };
      await warnWithoutTokens(store, config, (text) => printed.push(text));
      assert.deepEqual(printed, [
        "plant-store: no token can call the API (every stored token is revoked, and none is configured): make one with DATABASE_URL='postgres://plants:***@db1,db2/plants' npx plant-store token create --name <name> (with the password in place of ***)\n",
      ]);
    } finally {
      await store.close();
    }
  });
});
