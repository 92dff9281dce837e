import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { describeRowProblems } from '../../src/http/validation-messages.js';
import { validatorCompiler } from '../../src/http/validation.js';
import { NewPlant } from '../../src/plants/schema.js';
import type { ValidateFunction } from 'ajv';
import { assertError, testApp } from '../helpers.js';

/** Validation messages in plain words, every problem of a request in one message, through the real routes. */

const MERGE = { 'content-type': 'application/merge-patch+json' };
const URL_OK = 'https://93.184.215.14/hook';

describe('validation messages: the field and the rule in plain words, every problem listed', async () => {
  const t = await testApp(after);
  const message = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, body?: unknown, headers?: Record<string, string>) =>
    assertError(await t.call(method, url, { body, headers }), 400);

  const cases: Array<[string, () => Promise<string>, string]> = [
    ['an empty name', () => message('POST', '/plants', { id: 1, name: '' }), 'body.name must not be empty'],
    ['a missing name and id, both', () => message('POST', '/plants', {}), 'body.name is required; body.id is required'],
    ['an id as text', () => message('POST', '/plants', { id: '1', name: 'x' }), 'body.id must be an integer'],
    ['an id with a fraction', () => message('POST', '/plants', { id: 1.5, name: 'x' }), 'body.id must be an integer'],
    [
      'an id beyond int64',
      () => message('POST', '/plants', '{"id": 9223372036854775808, "name": "x"}'),
      'body.id must be an integer from -9223372036854775808 to 9223372036854775807',
    ],
    ['a name too long', () => message('POST', '/plants', { id: 1, name: 'n'.repeat(257) }), 'body.name must be at most 256 characters long'],
    ['a tag that is a number', () => message('POST', '/plants', { id: 1, name: 'x', tag: 5 }), 'body.tag must be a string'],
    [
      'a name with U+0000',
      () => message('POST', '/plants', { id: 1, name: 'a\u0000b' }),
      'body.name must not contain U+0000 or an unpaired surrogate',
    ],
    ['a body that is not an object', () => message('POST', '/plants', '[1]'), 'body must be an object'],
    ['a limit too large', () => message('GET', '/plants?limit=1001'), 'querystring.limit must be at most 1000'],
    ['a limit of 0', () => message('GET', '/plants?limit=0'), 'querystring.limit must be at least 1'],
    ['a limit not in digits', () => message('GET', '/plants?limit=1e2'), 'querystring.limit must be a whole number in plain decimal digits'],
    ['a limit beyond 2^53', () => message('GET', '/plants?limit=9007199254740993'), 'querystring.limit must be at most 1000'],
    ['a limit beyond int64', () => message('GET', '/events?limit=99999999999999999999'), 'querystring.limit must be at most 1000'],
    ['a limit far below its range', () => message('GET', '/plants?limit=-99999999999999999999'), 'querystring.limit must be at least 1'],
    ['a limit given twice', () => message('GET', '/plants?limit=1&limit=2'), 'querystring.limit must be given once'],
    ['a limit given twice', () => message('GET', '/plants?limit=1&limit=2'), 'querystring.limit must be given once'],
    [
      'a sort given twice',
      () => message('GET', '/plants?sort=id&sort=name'),
      'querystring.sort must be given once; querystring.sort must be one of id, -id, name, -name',
    ],
    ['an unknown format', () => message('GET', '/plants?format=xml'), 'querystring.format must be one of json, ndjson, csv'],
    ['an after that is not an id', () => message('GET', '/plants?after=abc'), 'querystring.after must be an integer'],
    [
      'an after beyond int64',
      () => message('GET', '/plants?after=9223372036854775808'),
      'querystring.after must be an integer from -9223372036854775808 to 9223372036854775807',
    ],
    ['a path id that is not an id', () => message('GET', '/plants/abc'), 'params.id must be an integer'],
    ['a merge patch tag of the wrong kind', () => message('PATCH', '/plants/1', { tag: 5 }, MERGE), 'body.tag must be a string or null'],
    [
      'a merge patch tag too long (its kind is right: the rule it breaks)',
      () => message('PATCH', '/plants/1', { tag: 't'.repeat(65) }, MERGE),
      'body.tag must be at most 64 characters long',
    ],
    ['a merge patch without a name (null)', () => message('PATCH', '/plants/1', { name: null }, MERGE), 'body.name must be a string'],
    ['an empty events list', () => message('POST', '/webhooks', { url: URL_OK, events: [] }), 'body.events must not be empty'],
    [
      'a repeated and an unknown event',
      () => message('POST', '/webhooks', { url: URL_OK, events: ['plant.created', 'plant.eaten', 'plant.created'] }),
      'body.events[1] must be one of plant.created, plant.updated, plant.deleted; body.events must not repeat an item (items 0 and 2 are the same)',
    ],
    [
      'enabled that is not a boolean',
      () => message('PATCH', '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C', { enabled: 'yes' }, MERGE),
      'body.enabled must be true or false',
    ],
    [
      'a replay window that is not a time',
      () => message('POST', '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/replay', { since: 'yesterday' }),
      'body.since must be a date and time in RFC 3339 form, such as 2026-01-31T12:00:00Z',
    ],
    [
      'a deliveries cursor that is not a webhook-id, and an unknown status',
      () => message('GET', '/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/deliveries?after=abc&status=lost'),
      'querystring.status must be one of pending, delivered, failed; querystring.after must be a webhook-id: msg_ and 26 letters and digits',
    ],
  ];
  for (const [what, send, expected] of cases) {
    it(what, async () => assert.equal(await send(), expected));
  }

  it('lists the problems of every part of the request: the path, the query string, then the body', async () => {
    const res = await t.call('PUT', '/plants/abc?nme=Fern&limit=5', { body: { name: '', tag: 7 } });
    assert.equal(
      assertError(res, 400),
      'params.id must be an integer; unknown query parameter "nme"; unknown query parameter "limit"; body.name must not be empty; body.tag must be a string',
    );
  });

  it('a part that passes after one that failed adds nothing; the parsed parameters stay right in the second pass', async () => {
    // limit is parsed to a number by the first pass before after fails; the second pass must not call it wrong.
    assert.equal(assertError(await t.call('GET', '/plants?limit=10&after=x'), 400), 'querystring.after must be an integer');
    assert.equal(assertError(await t.call('GET', '/plants/5?nme=1'), 400), 'unknown query parameter "nme"');
  });

  it('lists at most 10 problems, then counts the rest, however many the body holds', async () => {
    const events = Array.from({ length: 5000 }, (_, i) => `e${i}`);
    const text = assertError(await t.call('POST', '/webhooks', { body: { url: URL_OK, events } }), 400);
    const problems = text.split('; ');
    assert.equal(problems.length, 11, text.slice(0, 300));
    assert.equal(problems[0], 'body.events[0] must be one of plant.created, plant.updated, plant.deleted');
    assert.match(problems[10]!, /^and at least \d+ more problems$/, 'not all 4,990 are worded, nor counted');
    assert.ok(text.length < 1000, `${text.length} characters`);
  });

  it('shows a long unknown name cut short, quoted', async () => {
    const name = 'x'.repeat(500);
    assert.equal(assertError(await t.call('GET', `/plants?${name}=1`), 400), `unknown query parameter "${'x'.repeat(60)}…"`);
  });

  it('a valid request still passes, with its parameters parsed', async () => {
    assert.equal((await t.call('POST', '/plants', { body: { id: 42, name: 'Fern', tag: 'green' } })).statusCode, 200);
    const list = await t.call('GET', '/plants?limit=1&after=41&tag=green&format=json');
    assert.equal(list.statusCode, 200, list.payload);
    assert.deepEqual(list.json(), [{ id: 42, name: 'Fern', tag: 'green' }]);
  });
});

describe('import rows are worded the same way, the row named once', () => {
  const validate = validatorCompiler({ schema: NewPlant, httpPart: 'body', method: 'POST', url: '/x' }) as ValidateFunction;
  const row = (value: unknown) => {
    assert.equal(validate(value), false);
    return describeRowProblems('line 2', validate.errors);
  };

  it('names each field after the row', () => {
    assert.equal(row({ id: 'x', name: '' }), 'line 2: name must not be empty; id must be an integer');
    assert.equal(row({}), 'line 2: name is required; id is required');
    assert.equal(row(5), 'line 2: the row must be an object');
  });

  it('reports nothing for a valid row', () => {
    assert.equal(validate({ id: 1, name: 'ok' }), true);
    assert.equal(validate.errors, null);
  });
});
