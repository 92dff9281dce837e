import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { accessLogHook, createLogger, logDestination } from '../../src/logging/logger.js';
import { tempDir } from '../helpers.js';
import { until } from '../toolkit.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

test('one access line per request, with exactly these fields in this order, and a query token hidden', async () => {
  const sink = new Sink();
  const app = Fastify({ loggerInstance: createLogger('info', sink), genReqId: () => 'req-1' });
  after(() => app.close());
  const hook = accessLogHook(app.log);
  assert.ok(hook);
  app.addHook('onResponse', hook);
  app.get('/plants/:id', async () => ({ ok: true }));
  await app.inject({ method: 'GET', url: '/plants/7?access_token=secret123&tag=%22q%22' });
  const lines = sink.text.split('\n').filter((l) => l.includes('"msg":"request"'));
  assert.equal(lines.length, 1, sink.text);
  const line = lines[0]!;
  assert.match(
    line,
    /^\{"level":30,"time":\d+,"pid":\d+,"hostname":"[^"]*","reqId":"req-1","method":"GET","url":"\/plants\/7\?access_token=\[redacted\]&tag=%22q%22","status":200,"ms":\d+(\.\d+)?,"msg":"request"\}$/,
  );
  assert.ok(!line.includes('secret123'), 'a token in the query is hidden');
});

test('an access log is not installed when info lines are off, nor without a logger', () => {
  const quiet = Fastify({ loggerInstance: createLogger('warn', new Sink()) });
  const none = Fastify({ logger: false });
  after(() => Promise.all([quiet.close(), none.close()]));
  assert.equal(accessLogHook(quiet.log), undefined);
  assert.equal(accessLogHook(none.log), undefined);
});

test('the logger flushes its destination after a warning or an error, not after routine lines', () => {
  const written: string[] = [];
  const flushedAfter: number[] = [];
  const destination = { write: (line: string) => void written.push(line), flush: () => void flushedAfter.push(written.length) };
  const log = createLogger('debug', destination);
  log.info('a');
  log.debug('b');
  assert.deepEqual(flushedAfter, [], 'routine lines wait for the batch');
  log.warn('c');
  assert.deepEqual(flushedAfter, [3], 'a warning flushes everything up to and including itself');
  log.error('d');
  log.info('e');
  assert.deepEqual(flushedAfter, [3, 4]);
});

test('the batched destination holds routine lines back, writes them within its period, at once after a warning, and all on exit', async () => {
  const file = join(tempDir(after), 'log');
  const fd = openSync(file, 'w');
  const destination = logDestination(fd);
  after(() => {
    destination.close();
    closeSync(fd);
  });
  const log = createLogger('info', destination);
  log.info('routine');
  assert.equal(readFileSync(file, 'utf8'), '', 'a routine line is gathered, not written by itself');
  log.warn('urgent');
  assert.deepEqual(
    readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ['routine', 'urgent'],
    'a warning is written at once, after everything before it',
  );
  log.info('later');
  await until(() => readFileSync(file, 'utf8').includes('later'), 'the periodic flush');
  assert.match(readFileSync(file, 'utf8'), /"msg":"later"/, 'written by the periodic flush');

  // A process that logs and exits at once loses nothing.
  const logging = fileURLToPath(new URL('../../src/logging/logger.js', import.meta.url));
  const script = `import { createLogger, logDestination } from ${JSON.stringify(logging)};
    const log = createLogger('info', logDestination());
    for (let i = 0; i < 100; i++) log.info({ i }, 'line');
    process.exit(0);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.trim().split('\n').length, 100);
});

test("the access line made by hand is byte for byte the line pino would write for the same fields (createLogger's logger)", async () => {
  const sink = new Sink();
  const logger = createLogger('info', sink);
  const app = Fastify({ loggerInstance: logger, genReqId: () => 'req-"2"' });
  after(() => app.close());
  const hook = accessLogHook(app.log, logger);
  assert.ok(hook);
  app.addHook('onResponse', hook);
  app.post('/plants', async (_request, reply) => reply.code(201).send({ ok: true }));
  await app.inject({ method: 'POST', url: '/plants?q=%C3%A9t%C3%A9&name=%22x%22\\', payload: {} });
  const written = sink.text.split('\n').find((l) => l.includes('"msg":"request"'))!;
  const fields = JSON.parse(written) as { time: number; ms: number; url: string };
  assert.equal(fields.url, '/plants?q=%C3%A9t%C3%A9&name=%22x%22\\');
  sink.text = '';
  logger.child({}, { redact: [] }).info({ reqId: 'req-"2"', method: 'POST', url: fields.url, status: 201, ms: fields.ms }, 'request');
  assert.equal(written, sink.text.trim().replace(/"time":\d+/, `"time":${fields.time}`));
});
