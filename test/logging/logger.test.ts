import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createLogger, loggableUrl } from '../../src/logging/logger.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import { openSqlite, tempDir, testApp, TOKEN } from '../helpers.js';
import { LogSink } from '../log-sink.js';

test('logs are JSON lines with a request id per request, and never carry a token, whatever the request', async () => {
  const sink = new LogSink();
  const failing = { put: false };
  const store = openSqlite(tempDir(after));
  const apply = store.writes.apply.bind(store.writes) as (...args: unknown[]) => Promise<unknown>;
  // A disk that fails on demand: the store answers as SQLite does when the disk is full (POST's writes go through apply).
  (store.writes as { apply: (...args: unknown[]) => Promise<unknown> }).apply = (...args) =>
    failing.put ? Promise.reject(new StoreUnavailableError('SQLite: SQLITE_FULL', { cause: new Error('database or disk is full') })) : apply(...args);
  const t = await testApp(after, { store, logger: createLogger('trace', sink) });
  const readOnly = await t.tokenWith('plants:read');
  const unknown = 'unknownTokenValue_9f8e7d6c5b4a39281706';
  const malformed = 'malformedTokenValue"with spaces 1a2b3c';
  const basic = Buffer.from(`user:${'basicSecretValue8c7d6e'}`).toString('base64');
  const secrets = [TOKEN, readOnly, unknown, 'malformedTokenValue', basic, 'basicSecretValue8c7d6e', 'queryTokenValue4d5e6f'];

  const answers = [
    await t.call('POST', '/plants', { body: { id: 1, name: 'Fern' } }),
    await t.call('GET', '/plants/1'),
    await t.call('POST', '/plants', { token: readOnly, body: { id: 2, name: 'Ivy' } }),
    await t.call('GET', '/plants', { token: unknown }),
    await t.call('GET', '/plants', { headers: { authorization: `Bearer ${malformed}` } }),
    await t.call('GET', '/plants', { headers: { authorization: `Basic ${basic}` } }),
    await t.call('GET', '/plants?access_token=queryTokenValue4d5e6f&limit=x'),
    await t.call('GET', `/plants/${TOKEN}`),
    await t.call('POST', '/plants', { body: '{"id": 3, "name": ' }),
    await t.call('GET', '/healthz', { token: unknown }),
  ];
  // A store failure logs an error with its cause: still no token.
  failing.put = true;
  answers.push(await t.call('POST', '/plants', { body: { id: 4, name: 'Moss' } }));
  assert.equal(answers.at(-1)!.statusCode, 503);

  const lines = sink.lines();
  assert.ok(lines.length >= answers.length, `expected a log line per request, got ${lines.length}`);
  for (const secret of secrets.filter((s) => s !== TOKEN)) {
    assert.ok(!sink.text.includes(secret), `a log line carries the secret ${secret}:\n${sink.text}`);
  }
  // The static token also spells a path segment above, which is logged as the URL the client sent;
  // everywhere else it must be absent.
  const withoutThatUrl = lines.filter((line) => line.url !== `/plants/${TOKEN}`);
  assert.ok(!JSON.stringify(withoutThatUrl).includes(TOKEN), 'the static token reached a log line');

  const accessLines = lines.filter((line) => line.msg === 'request');
  assert.equal(accessLines.length, answers.length);
  const ids = answers.map((a) => a.headers['x-request-id']);
  assert.deepEqual(
    accessLines.map((line) => line.reqId),
    ids,
    'each access line carries the id the answer carried',
  );
  assert.equal(new Set(ids).size, ids.length, 'request ids are unique');
  const storeError = lines.find((line) => line.msg === 'store unavailable');
  assert.ok(storeError, 'the store failure is logged');
  assert.equal(storeError.reqId, ids.at(-1));
  for (const line of lines) assert.equal(typeof line.level, 'number');
});

test('a token in the query string is hidden from the logged URL, whatever the case or spelling of its name', () => {
  assert.equal(loggableUrl('/plants?access_token=abc&limit=2'), '/plants?access_token=[redacted]&limit=2');
  assert.equal(loggableUrl('/plants?limit=2&token=abc'), '/plants?limit=2&token=[redacted]');
  // Query parsers read names in any case and percent-decoded: so does the redaction.
  const hidden: Array<[string, string]> = [
    ['/plants?Token=SECRET', '/plants?Token=[redacted]'],
    ['/plants?TOKEN=SECRET', '/plants?TOKEN=[redacted]'],
    ['/plants?ACCESS_TOKEN=SECRET&limit=2', '/plants?ACCESS_TOKEN=[redacted]&limit=2'],
    ['/plants?limit=2&Access_Token=SECRET', '/plants?limit=2&Access_Token=[redacted]'],
    ['/plants?aCcEsS_tOkEn=SECRET&tag=x', '/plants?aCcEsS_tOkEn=[redacted]&tag=x'],
    ['/plants?access%5Ftoken=SECRET', '/plants?access%5Ftoken=[redacted]'],
    ['/plants?%74oken=SECRET', '/plants?%74oken=[redacted]'],
    ['/plants?%54%4F%4B%45%4E=SECRET', '/plants?%54%4F%4B%45%4E=[redacted]'],
    ['/plants?id_token=SECRET&refresh-token=SECRET', '/plants?id_token=[redacted]&refresh-token=[redacted]'],
    ['/plants?a=1&&token=SECRET&token=SECRET', '/plants?a=1&&token=[redacted]&token=[redacted]'],
    ['/plants/7?tag=x&Token=SECRET%26more', '/plants/7?tag=x&Token=[redacted]'],
  ];
  for (const [url, shown] of hidden) {
    assert.equal(loggableUrl(url), shown, url);
    assert.ok(!loggableUrl(url).includes('SECRET'), url);
  }
  // Other parameters, and paths, are shown as sent.
  for (const url of ['/plants?limit=2', '/plants?tag=token', '/plants?tokens=2', '/plants?tag=%zz', '/plants/token=x', '/plants?token', '/plants']) {
    assert.equal(loggableUrl(url), url, url);
  }
});

test('the access line of a request with a token in its query, in any case, never carries it', async () => {
  const sink = new LogSink();
  const t = await testApp(after, { logger: createLogger('info', sink) });
  for (const name of ['Token', 'ACCESS_TOKEN', 'Access_Token', 'access%5Ftoken']) {
    // GET /plants takes no such parameter (400, naming it): the access line is written all the same.
    const res = await t.call('GET', `/plants?limit=1&${name}=querySecretValue9a8b7c`);
    assert.equal(res.statusCode, 400);
    assert.ok(!res.body.includes('querySecretValue9a8b7c'), res.body);
  }
  const urls = sink
    .lines()
    .filter((line) => line.msg === 'request')
    .map((line) => line.url);
  assert.equal(urls.length, 4);
  assert.ok(!sink.text.includes('querySecretValue9a8b7c'), sink.text);
  for (const url of urls) assert.match(String(url), /^\/plants\?limit=1&[^=]+=\[redacted\]$/);
});
