import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import Fastify from 'fastify';
import { accessLogHook } from '../../src/http/access-log.js';
import { BatchedLogStream } from '../../src/http/log-stream.js';
import { loggerOptions } from '../../src/http/logging.js';
import { tempDir } from '../helpers.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

test('the access line built directly is the line pino itself writes for the same fields', async () => {
  const sink = new Sink();
  const app = Fastify({ logger: loggerOptions('info', sink), genReqId: () => 'req-1' });
  after(() => app.close());
  const hook = accessLogHook(app.log);
  assert.ok(hook);
  assert.equal(hook.name, 'accessLog', 'the fast path is taken for the service logger');
  app.addHook('onResponse', hook);
  app.get('/plants/:id', async () => ({ ok: true }));
  await app.inject({ method: 'GET', url: '/plants/7?access_token=secret123&tag=%22q%22' });
  const line = sink.text.split('\n').find((l) => l.includes('"msg":"request"'));
  assert.ok(line, sink.text);
  const fields = JSON.parse(line) as Record<string, unknown>;
  // pino writes the same fields, in this order, for this call:
  sink.text = '';
  app.log.child({ reqId: 'req-1' }).info({ method: 'GET', url: fields.url, status: 200, ms: fields.ms }, 'request');
  const expected = sink.text.trim().replace(/"time":\d+/, '"time":T');
  assert.equal(line.replace(/"time":\d+/, '"time":T'), expected);
  assert.ok(!line.includes('secret123'), 'a token in the query is hidden');
});

test('an access log is not installed when info lines are off', () => {
  const app = Fastify({ logger: loggerOptions('warn') });
  after(() => app.close());
  assert.equal(accessLogHook(app.log), undefined);
});

test('batched log lines: routine lines wait, a warning or error line writes everything before it at once', () => {
  const file = join(tempDir(after), 'log');
  const fd = openSync(file, 'w');
  after(() => closeSync(fd));
  const stream = new BatchedLogStream(fd);
  stream.write('{"level":30,"msg":"a"}\n');
  stream.write('{"level":20,"msg":"b"}\n');
  assert.equal(readFileSync(file, 'utf8'), '', 'info and debug lines are gathered');
  stream.write('{"level":50,"msg":"c"}\n');
  assert.equal(readFileSync(file, 'utf8'), '{"level":30,"msg":"a"}\n{"level":20,"msg":"b"}\n{"level":50,"msg":"c"}\n');
  stream.write('{"level":30,"msg":"d"}\n');
  stream.flush();
  assert.ok(readFileSync(file, 'utf8').endsWith('{"level":30,"msg":"d"}\n'));
  stream.write('not a pino line\n');
  assert.ok(readFileSync(file, 'utf8').endsWith('not a pino line\n'), 'a line of unknown shape is written at once');
});
