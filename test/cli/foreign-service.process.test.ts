import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { CLI_JS, run, type Ran } from '../process.js';

/**
 * The CLI through --url trusts no answer for its status alone. A redirect to another origin is not
 * followed (fetch would send the request there again, body and all: `token revoke` said "revoked" when
 * nothing was), a redirect within the origin only for a read; and a 2xx is a success only in the shape the
 * operation promises (`token create` against another program printed "Cannot read properties of undefined").
 * Real HTTP servers, playing a proxy that redirects and a program that is not the plant store.
 */

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** An HTTP server answering with `answer`, recording every request it gets. */
async function fakeServer(
  answer: (request: IncomingMessage, response: ServerResponse, body: string) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, authorization: request.headers.authorization, body });
      answer(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

const TOKEN = 'ps_cli-foreign-service-0123456789abcdefghijklmn';
const ACTIVE = { id: '3f9a1c07b2e4', name: 'ci', scopes: ['plants:read'], createdAt: '2026-01-31T12:00:00.000Z', revokedAt: null };

describe('the CLI through --url', () => {
  const away = tempDir(after);
  const file = join(away, 'plants.ndjson');
  writeFileSync(file, '{"id":1,"name":"Fern"}\n');
  const plantStore = (url: string, ...args: string[]): Promise<Ran> =>
    run([CLI_JS, ...args, '--url', url], { cwd: away, env: { PLANT_STORE_TOKEN: TOKEN }, timeoutMs: 20_000 });

  /** Exit 1, nothing on stdout, one line on stderr matching `line`. */
  function refused(result: Ran, line: RegExp): void {
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '', 'no success printed, no secret');
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, line);
    assert.doesNotMatch(result.stderr, /Cannot read properties|TypeError|\n\s+at /);
  }

  test('follows no redirect to another origin, for any command: says so, exits 1, and sends nothing there', async () => {
    const elsewhere = await fakeServer((_request, response) => json(response, 204, {}));
    for (const status of [301, 302, 303, 307, 308]) {
      const proxy = await fakeServer((request, response) => {
        response.writeHead(status, { location: `${elsewhere.url}${request.url!}` }).end();
      });
      // Every command behind the 307 of the review; the token and plant writes behind the others.
      const every = [
        ['token', 'revoke', 'ci'],
        ['token', 'create', '--name', 'x'],
        ['token', 'list'],
        ['plants', 'create', '--id', '1', '--name', 'Fern'],
        ['plants', 'get', '1'],
        ['plants', 'delete', '1'],
        ['plants', 'list'],
        ['plants', 'export'],
        ['plants', 'import', file],
        ['events', 'tail'],
        ['webhook', 'add', 'https://hooks.example/x'],
        ['webhook', 'list'],
        ['webhook', 'remove', 'ep_1'],
        ['webhook', 'deliveries', 'ep_1'],
      ];
      const commands = status === 307 ? every : every.slice(0, 2);
      for (const command of commands) {
        refused(
          await plantStore(proxy.url, ...command),
          new RegExp(
            `^plant-store: ${proxy.url} answered [A-Z]+ /\\S* with ${status}, a redirect to another origin \\(${elsewhere.url}\\): not followed, so neither the request nor the token went there`,
          ),
        );
      }
      assert.equal(proxy.seen.length, commands.length, 'one request each, not followed');
    }
    assert.deepEqual(elsewhere.seen, [], 'nothing reached the other origin: no request, no body, no token');
  });

  test('says a token that cannot be one is malformed, for every command, and never shows it', async () => {
    const service = await fakeServer((_request, response) => json(response, 200, []));
    const pasted = [
      ['ps_firstHALFfirstHALF\nps_secondHALFsecondHALF', /it holds a line break \(character 22 of 45\)/],
      ['ps_firstHALFfirstHALF\r\n', /it holds a line break \(character 22 of 23\)/],
      ['ps_firstHALFfirstHALF ps_secondHALFsecondHALF', /it holds white space \(character 22 of 45\)/],
      ['ps_firstHALF\u00e9firstHALF', /it holds a character outside ASCII \(character 13 of 22\)/],
      ['ps_firstHALF\u001bfirstHALF', /it holds a control character \(character 13 of 22\)/],
      ['ps_firstHALF=firstHALF', /it holds an = before its end \(character 13 of 22\)/],
      ['ps_firstHALF"firstHALF', /it holds the character "\\"" \(character 13 of 22\)/],
    ] as const;
    const commands = [
      ['token', 'create', '--name', 'x'],
      ['token', 'list'],
      ['token', 'revoke', 'ci'],
      ['plants', 'create', '--id', '1', '--name', 'Fern'],
      ['plants', 'get', '1'],
      ['plants', 'delete', '1'],
      ['plants', 'list'],
      ['plants', 'export'],
      ['plants', 'import', file],
      ['events', 'tail'],
      ['webhook', 'add', 'https://hooks.example/x'],
      ['webhook', 'list'],
      ['webhook', 'remove', 'ep_1'],
      ['webhook', 'deliveries', 'ep_1'],
    ];
    for (const [i, command] of commands.entries()) {
      // Every command with the line break of the review; the other faults spread over the commands.
      for (const [token, words] of i === 0 ? pasted : [pasted[0], pasted[i % pasted.length]!]) {
        const result = await run([CLI_JS, ...command, '--url', service.url], { cwd: away, env: { PLANT_STORE_TOKEN: token } });
        refused(result, /^plant-store: [a-z]+ [a-z]+: PLANT_STORE_TOKEN is malformed: /);
        assert.match(result.stderr, words, `${command.join(' ')}: ${JSON.stringify(token)}`);
        assert.match(result.stderr, /it is not shown here/);
        assert.doesNotMatch(result.stderr, /HALF/, 'no part of the token is shown');
      }
    }
    assert.deepEqual(service.seen, [], 'nothing was sent');
  });

  test('follows a redirect within the origin for a read, never for a write', async () => {
    const moved = await fakeServer((request, response) => {
      if (request.url!.startsWith('/old/')) return void response.writeHead(308, { location: request.url!.replace('/old/', '/new/') }).end();
      if (request.method === 'GET') return json(response, 200, { id: 1, name: 'Fern' });
      response.writeHead(204).end();
    });
    const got = await plantStore(`${moved.url}/old`, 'plants', 'get', '1');
    assert.equal(got.code, 0, got.stderr);
    assert.deepEqual(JSON.parse(got.stdout), { id: 1, name: 'Fern' });
    assert.equal(moved.seen.at(-1)!.authorization, `Bearer ${TOKEN}`, 'the token goes along within the origin');
    refused(
      await plantStore(`${moved.url}/old`, 'plants', 'delete', '1'),
      /^plant-store: http:\/\/127\.0\.0\.1:\d+ answered DELETE \/old\/plants\/1 with 308, a redirect to \/new\/plants\/1: not followed \(only reads are/,
    );
    assert.ok(!moved.seen.some((seen) => seen.method === 'DELETE' && seen.url.startsWith('/new/')), 'the delete was not sent again');
  });

  test('takes a 2xx for success only in the shape the operation promises, and says in words how it is not', async () => {
    const unlike = /^plant-store: http:\/\/127\.0\.0\.1:\d+ does not answer as the plant store does \(is it the service's address\?\): /;
    const other = await fakeServer((request, response) => {
      const { method, url } = request;
      if (method === 'POST' && url === '/tokens') return json(response, 201, { ok: true });
      if (method === 'POST' && url === '/webhooks') return json(response, 201, { id: 'ep_1', url: 'https://hooks.example/x' });
      if (method === 'GET' && url!.startsWith('/webhooks/')) return void response.writeHead(200, { 'content-type': 'text/html' }).end('<p>');
      if (method === 'GET' && url!.startsWith('/webhooks')) return json(response, 200, [{ id: 7 }]);
      if (method === 'GET' && url!.startsWith('/tokens')) return json(response, 200, [ACTIVE]);
      if (method === 'DELETE') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Welcome</h1>');
      if (method === 'GET' && url!.startsWith('/plants/'))
        return void response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Welcome</h1>');
      if (method === 'POST' && url === '/plants') return json(response, 200, { stored: true });
      if (method === 'POST') return json(response, 200, { created: 'all' });
      if (method === 'GET' && request.headers.accept === 'application/x-ndjson')
        return void response.writeHead(200, { 'content-type': 'text/html' }).end('<p>');
      if (method === 'GET' && url!.startsWith('/plants')) return json(response, 200, { plants: [] });
      if (method === 'GET' && url!.startsWith('/events')) return void response.writeHead(200, { 'content-type': 'text/html' }).end('<p>');
      response.writeHead(404).end();
    });
    const cases: Array<[string[], RegExp]> = [
      [
        ['token', 'create', '--name', 'x'],
        /POST \/tokens was answered with JSON that is not a new token \(answer\.id is required; .*answer\.secret is required\); whether anything was done there is not known\n$/,
      ],
      [
        ['token', 'revoke', 'ci'],
        /DELETE \/tokens\/\{id\} was answered 200 \(text\/html\), where the service answers 204; whether anything was done there is not known\n$/,
      ],
      [['plants', 'get', '1'], /GET \/plants\/\{id\} was answered 200 \(text\/html\), not with a plant as JSON\n$/],
      [['plants', 'delete', '1'], /DELETE \/plants\/\{id\} was answered 200 \(text\/html\), where the service answers 204/],
      [['plants', 'create', '--id', '1', '--name', 'Fern'], /POST \/plants was answered with JSON that is not a plant \(answer\.name is required\)/],
      [
        ['plants', 'import', file],
        /POST \/plants\/import was answered with JSON that is not the counts of an import \((?=.*answer\.created must be an integer)(?=.*answer\.replaced is required)/,
      ],
      [['plants', 'list'], /GET \/plants was answered with JSON that is not a list of plants \(answer must be an array\)/],
      [['plants', 'export'], /GET \/plants was answered with text\/html, where the service answers application\/x-ndjson/],
      [['events', 'tail'], /GET \/events was answered 200 \(text\/html\), where the service answers text\/event-stream\n$/],
      [
        ['webhook', 'add', 'https://hooks.example/x'],
        /POST \/webhooks was answered with JSON that is not a new webhook endpoint \((?=.*answer\.secret is required)(?=.*answer\.events is required).*\); whether anything was done there is not known\n$/,
      ],
      [['webhook', 'list'], /GET \/webhooks was answered with JSON that is not a list of webhook endpoints \((?=.*answer\[0\]\.id must be a string)/],
      [['webhook', 'remove', 'ep_1'], /DELETE \/webhooks\/\{id\} was answered 200 \(text\/html\), where the service answers 204/],
      [
        ['webhook', 'deliveries', 'ep_1'],
        /GET \/webhooks\/\{id\}\/deliveries was answered 200 \(text\/html\), not with a list of deliveries as JSON\n$/,
      ],
    ];
    for (const [command, words] of cases) {
      const result = await plantStore(other.url, ...command);
      refused(result, unlike);
      assert.match(result.stderr, words, command.join(' '));
    }
    // A list of tokens of the wrong shape is no list either: nothing is revoked on its word.
    const odd = await fakeServer((request, response) => (request.method === 'GET' ? json(response, 200, [{ id: 7 }]) : json(response, 204, {})));
    refused(
      await plantStore(odd.url, 'token', 'revoke', 'ci'),
      /GET \/tokens was answered with JSON that is not a list of tokens \((?=.*answer\[0\]\.id must be a string)(?=.*answer\[0\]\.name is required)/,
    );
    assert.deepEqual(
      odd.seen.map((seen) => seen.method),
      ['GET'],
    );
  });

  test('an export whose answer breaks off says it is incomplete, naming the service, exit 1', async () => {
    const cut = await fakeServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
      response.write('id,name,tag\r\n1,Fern,\r\n');
      setTimeout(() => response.socket?.destroy(), 50);
    });
    const result = await plantStore(cut.url, 'plants', 'export', '--format', 'csv');
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, 'id,name,tag\r\n1,Fern,\r\n', 'what came is printed');
    assert.match(
      result.stderr,
      new RegExp(`^plant-store: the export from ${cut.url} was cut off before its end \\(.+\\): what was printed is incomplete\\n$`),
    );
  });
});
