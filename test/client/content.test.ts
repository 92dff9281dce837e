import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createClient } from '@plant-store/client';

/**
 * How the client reads and writes bodies whatever the service answers, including answers it does not
 * give today (CSV and NDJSON exports, a proxy's HTML error page): the client's fetch is a stub that
 * records each request and answers with a canned response.
 */
function stubbed(answer: () => Response) {
  const requests: Request[] = [];
  const client = createClient({
    baseUrl: 'http://plants.test',
    fetch: (request: Request) => {
      requests.push(request);
      return Promise.resolve(answer());
    },
  });
  return { client, requests };
}

const CSV = 'id,name\n9223372036854775807,Monstera\n';

describe('answers', () => {
  it('a JSON answer is parsed exactly, whatever the JSON media type', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/problem+json', 'APPLICATION/JSON']) {
      const { client } = stubbed(() => new Response('{"id":9007199254740993,"name":"x"}', { headers: { 'content-type': type } }));
      const { data } = await client.GET('/plants/{id}', { params: { path: { id: 1 } } });
      assert.deepEqual(data, { id: 9007199254740993n, name: 'x' }, type);
    }
  });

  it('an answer that is not JSON (text/csv, NDJSON, no type) comes as its text, without failing', async () => {
    for (const type of ['text/csv', 'application/x-ndjson', 'text/plain; charset=utf-8', null]) {
      const headers: Record<string, string> = type === null ? {} : { 'content-type': type };
      const body = type === null ? new TextEncoder().encode(CSV) : CSV;
      const { client } = stubbed(() => new Response(body, { headers }));
      const { data, error } = await client.GET('/plants');
      assert.equal(error, undefined);
      assert.equal(data, CSV, String(type));
    }
  });

  it('parseAs reads a 2xx answer as asked: text, a stream, bytes', async () => {
    const { client } = stubbed(() => new Response('[{"id":9007199254740993,"name":"x"}]', { headers: { 'content-type': 'application/json' } }));
    assert.equal((await client.GET('/plants', { parseAs: 'text' })).data, '[{"id":9007199254740993,"name":"x"}]');
    const stream = (await client.GET('/plants', { parseAs: 'stream' })).data;
    assert.ok(stream instanceof ReadableStream);
    assert.equal(await new Response(stream).text(), '[{"id":9007199254740993,"name":"x"}]');
    const bytes = (await client.GET('/plants', { parseAs: 'arrayBuffer' })).data;
    assert.equal(bytes?.byteLength, 36);
  });

  it('an empty 2xx answer has no data', async () => {
    const { client } = stubbed(() => new Response('', { status: 200, headers: { 'content-type': 'application/json' } }));
    const { data, error, response } = await client.GET('/healthz');
    assert.equal(response.status, 200);
    assert.equal(data, undefined);
    assert.equal(error, undefined);
  });
});

describe('errors', () => {
  it("the service's Error body is the error as sent", async () => {
    const body = { error: 503, message: 'the store is unavailable, retry later (request id x)' };
    const { client } = stubbed(() => Response.json(body, { status: 503, headers: { 'retry-after': '1' } }));
    const { data, error, response } = await client.GET('/plants');
    assert.equal(data, undefined);
    assert.deepEqual(error, body);
    assert.equal(response.headers.get('retry-after'), '1');
  });

  it("the service's problem details (Accept: application/problem+json) are the Error shape they say the same as", async () => {
    const problem = {
      type: 'tag:plant-store,2026:problem:validation_failed',
      title: 'The request is not valid',
      status: 400,
      detail: 'body.name must not be empty',
      code: 'validation_failed',
      field: 'body.name',
    };
    const { client } = stubbed(() => new Response(JSON.stringify(problem), { status: 400, headers: { 'content-type': 'application/problem+json' } }));
    const { error } = await client.GET('/plants');
    assert.deepEqual(error, { error: 400, message: 'body.name must not be empty', code: 'validation_failed', field: 'body.name' });
    const { client: without } = stubbed(() =>
      Response.json({ ...problem, field: undefined, status: 404, detail: 'no plant with id 4', code: 'not_found' }, { status: 404 }),
    );
    assert.deepEqual((await without.GET('/plants')).error, { error: 404, message: 'no plant with id 4', code: 'not_found' });
  });

  it('an error the service did not write still gives the Error shape: status and text', async () => {
    const cases: Array<[Response, { error: number; message: string }]> = [
      [
        new Response('<html>Bad Gateway</html>\n', { status: 502, headers: { 'content-type': 'text/html' } }),
        { error: 502, message: '<html>Bad Gateway</html>' },
      ],
      [new Response(null, { status: 401, statusText: 'Unauthorized' }), { error: 401, message: '401 Unauthorized' }],
      [Response.json({ detail: 'nope' }, { status: 400 }), { error: 400, message: '{"detail":"nope"}' }],
      [new Response('', { status: 500 }), { error: 500, message: '500' }],
    ];
    for (const [answer, expected] of cases) {
      const { client } = stubbed(() => answer);
      const { data, error, response } = await client.GET('/plants');
      assert.equal(data, undefined);
      assert.equal(response.status, expected.error);
      assert.deepEqual(error, expected);
    }
  });
});

describe('requests', () => {
  const ok = () => Response.json({ name: 'x' });

  it('a body is JSON with bigints as plain integers, sent as application/json', async () => {
    const { client, requests } = stubbed(ok);
    await client.POST('/plants', { body: { id: -9223372036854775808n, name: 'Min', tag: 'a"b' } });
    const [request] = requests;
    assert.equal(request?.method, 'POST');
    assert.equal(request.headers.get('content-type'), 'application/json');
    assert.equal(await request.text(), '{"id":-9223372036854775808,"name":"Min","tag":"a\\"b"}');
  });

  it('a merge patch keeps its nulls', async () => {
    const { client, requests } = stubbed(ok);
    await client.PATCH('/plants/{id}', { params: { path: { id: 3 } }, body: { tag: null } });
    assert.equal(await requests[0]?.text(), '{"tag":null}');
  });

  it('bigints in a path and a query string are their decimal digits', async () => {
    const { client, requests } = stubbed(ok);
    await client.GET('/plants/{id}', { params: { path: { id: 9223372036854775807n } } });
    await client.GET('/plants', { params: { query: { after: -9223372036854775808n, limit: 5, tag: ['a b&c', 'd'] } } });
    assert.deepEqual(
      requests.map((request) => request.url),
      ['http://plants.test/plants/9223372036854775807', 'http://plants.test/plants?after=-9223372036854775808&limit=5&tag=a%20b%26c&tag=d'],
    );
  });

  it('a body sent with a Content-Type that is not JSON goes as given (a CSV import)', async () => {
    const { client, requests } = stubbed(ok);
    const untyped = client.POST as unknown as (path: string, options: { body: string; headers: Record<string, string> }) => Promise<unknown>;
    await untyped('/plants', { body: CSV, headers: { 'Content-Type': 'text/csv' } });
    assert.equal(requests[0]?.headers.get('content-type'), 'text/csv');
    assert.equal(await requests[0]?.text(), CSV);
  });
});
