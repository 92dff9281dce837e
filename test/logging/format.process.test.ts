import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { chooseLogFormat, prettyDestination } from '../../src/logging/format.js';
import { createLogger } from '../../src/logging/logger.js';
import { tempDir } from '../helpers.js';
import { baseEnv, SERVER_JS } from '../process.js';
import { needs, until } from '../toolkit.js';

/** Without terminal colour codes, which the assertions look through. */
const plain = stripVTControlCharacters;

describe('the log format', () => {
  it('is readable text on a terminal, JSON lines when piped or in production, unless LOG_FORMAT says', () => {
    assert.equal(loadConfig({}).logFormat, 'auto');
    assert.equal(loadConfig({ LOG_FORMAT: 'JSON' }).logFormat, 'json');
    assert.equal(chooseLogFormat('auto', true, undefined), 'pretty');
    assert.equal(chooseLogFormat('auto', true, 'development'), 'pretty');
    assert.equal(chooseLogFormat('auto', false, undefined), 'json');
    assert.equal(chooseLogFormat('auto', true, 'production'), 'json');
    assert.equal(chooseLogFormat('json', true, undefined), 'json');
    assert.equal(chooseLogFormat('pretty', false, 'production'), 'pretty');
  });

  it('pretty: one readable line per log line, the access line shortened, tokens still redacted', async () => {
    const file = join(tempDir(after), 'log.txt');
    const fd = openSync(file, 'w');
    const log = createLogger('info', await prettyDestination(fd));
    log.info({ store: 'sqlite' }, 'plant store ready');
    log.info({ reqId: 'r-1', method: 'GET', url: '/plants?limit=2', status: 200, ms: 1.25 }, 'request');
    log.warn({ token: 'secret-token-value' }, 'something odd');
    closeSync(fd);
    const lines = plain(readFileSync(file, 'utf8'))
      .split('\n')
      .filter((line) => line !== '');
    assert.equal(lines.length, 3, lines.join('\n'));
    assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: plant store ready \{"store":"sqlite"\}$/);
    assert.match(lines[1]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/plants\?limit=2 200 1\.25 ms \{"reqId":"r-1"\}$/);
    assert.match(lines[2]!, /WARN: something odd \{"token":"\[redacted\]"\}$/);
  });

  const script = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));
  it(
    'a real start on a terminal: readable lines on stdout, the first token on stderr only',
    { skip: needs('a real start on a terminal', !script && 'util-linux `script` is not installed, so no terminal can be given to the server') },
    async () => {
      const dir = tempDir(after);
      const stderrFile = join(dir, 'stderr.txt');
      // script gives the command a terminal for stdout; stderr goes to a file, as an operator may redirect it.
      const command = `'${process.execPath}' '${SERVER_JS}' 2>'${stderrFile}'`;
      const child = spawn(script!, ['-qec', command, '/dev/null'], {
        env: baseEnv({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `file:${join(dir, 'plants.db')}`, LOG_LEVEL: 'info' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let terminal = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (terminal += chunk));
      const closed = new Promise((resolve) => child.once('close', resolve));
      after(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await closed;
      });

      await until(() => plain(terminal).includes('plant store ready'), `the ready line on the terminal, got: ${terminal}`, { timeoutMs: 30_000 });
      const url = /Server listening at (http:\/\/[\d.:]+)/.exec(plain(terminal))?.[1];
      assert.ok(url, terminal);
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      await until(() => plain(terminal).includes('GET /healthz 200'), `the access line, got: ${terminal}`, { timeoutMs: 10_000 });

      const lines = plain(terminal)
        .split(/\r?\n/)
        .filter((line) => line.trim() !== '');
      for (const line of lines) assert.match(line, /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN): /, `a readable line, not JSON: ${line}`);
      assert.ok(!terminal.includes('ps_'), 'no token on the terminal (stdout)');
      assert.match(readFileSync(stderrFile, 'utf8'), /Created the first access token[\s\S]*ps_[\w-]+/, 'the token went to stderr');
      child.kill('SIGTERM');
      await closed;
    },
  );
});
