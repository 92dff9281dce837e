import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { testApp } from '../helpers.js';
import { assertError } from '../helpers.js';

interface Parameter {
  name: string;
  in: string;
  deprecated?: boolean;
  description?: string;
  schema: { enum?: string[] };
}
interface OpenApiDoc {
  paths: Record<string, Record<string, { operationId: string; tags: string[]; parameters?: Parameter[] }>>;
}

/** RFC 9745's Deprecation, RFC 8594's Sunset and the Link to the documentation, as a deprecated name's answer carries them. */
function assertDeprecated(response: LightMyRequestResponse, docs: string): void {
  const what = `${response.statusCode} ${response.payload.slice(0, 200)}`;
  const since = /^@(\d+)$/.exec(String(response.headers.deprecation));
  assert.ok(since, `Deprecation: ${String(response.headers.deprecation)} (${what})`);
  const sunset = String(response.headers.sunset);
  assert.match(sunset, /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/);
  // A deprecation lasts twelve months at least: the sunset is a year or more after it.
  assert.ok(Date.parse(sunset) - Number(since[1]) * 1000 >= 365 * 24 * 3600 * 1000, `${sunset} is a year after ${since[1]}`);
  const links = String(response.headers.link).split(/,\s*(?=<)/);
  assert.ok(links.includes(`<${docs}>; rel="deprecation"; type="text/html"`), `Link: ${String(response.headers.link)}`);
  assert.match(String(response.headers.warning), /^299 - "querystring\.\w+ is deprecated: use \w+/);
}

/**
 * Every query parameter the OpenAPI document marks deprecated (the old name of a renamed filter) is
 * still taken as its new name, until its sunset; its answer, whatever its status, says it is deprecated;
 * both names at once is 400. Derived from the document, so a parameter renamed later is held to it too.
 */
describe('every deprecated query parameter', async () => {
  const t = await testApp(after);
  const doc = (await t.call('GET', '/openapi.json', { token: null })).json<OpenApiDoc>();
  const deprecated = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).flatMap(([method, op]) =>
      (op.parameters ?? []).filter((p) => p.deprecated === true).map((parameter) => ({ path, method, op, parameter })),
    ),
  );

  test('the renamed filters are there: /tokens takes state as status', () => {
    assert.deepEqual(
      deprecated.map(({ method, path, parameter }) => `${method} ${path} ${parameter.name}`),
      ['get /tokens state'],
    );
  });

  for (const { path, method, op, parameter } of deprecated) {
    const url = path.replace(/\{[^}]+\}/g, '7');
    const now = /`(\w+)`/.exec(parameter.description ?? '')?.[1];
    const value = parameter.schema.enum?.[0] ?? '1';
    const depth = path.split('/').length - 2;
    const docs = `${'../'.repeat(depth)}docs#/${op.tags[0]}/${op.operationId}`;

    test(`${method.toUpperCase()} ${path}?${parameter.name}= answers as ?${now}= does, saying it is deprecated`, async () => {
      assert.ok(now !== undefined, `the description of ${parameter.name} names its new name in a code span`);
      const old = await t.call('GET', `${url}?${parameter.name}=${value}&limit=1`);
      const current = await t.call('GET', `${url}?${now}=${value}&limit=1`);
      assert.equal(old.statusCode, current.statusCode);
      assert.equal(old.payload, current.payload);
      assertDeprecated(old, docs);
      for (const header of ['deprecation', 'sunset', 'warning']) assert.equal(current.headers[header], undefined, `${header} for the new name`);
      assert.doesNotMatch(String(current.headers.link), /rel="deprecation"/);
    });

    test(`${method.toUpperCase()} ${path}: the deprecated name beside the new one is 400`, async () => {
      const both = await t.call('GET', `${url}?${parameter.name}=${value}&${now}=${value}`);
      assertError(both, 400, `querystring.${parameter.name} is the deprecated name of ${now}`);
      assertDeprecated(both, docs);
    });

    test(`${method.toUpperCase()} ${path}?${parameter.name}=: refused before it is read (401, a value refused), still said deprecated`, async () => {
      const unauthorized = await t.call('GET', `${url}?${parameter.name}=${value}`, { token: null });
      assertError(unauthorized, 401);
      assertDeprecated(unauthorized, docs);
      const refused = await t.call('GET', `${url}?${parameter.name}=no-such-value`);
      assertError(refused, 400, `querystring.${parameter.name}`);
      assertDeprecated(refused, docs);
    });
  }
});
