import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { VERSION } from '../../src/version.js';
import { testApp } from '../helpers.js';

/** The probes: /healthz says which version answers; /readyz speaks for the store and for the instance's stop. */

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('GET /healthz', () => {
  test('answers {"status":"ok","version":<package.json version>}, without a token', async () => {
    const t = await testApp(after);
    const response = await t.call('GET', '/healthz', { token: null });
    assert.equal(response.statusCode, 200);
    assert.equal(response.payload, JSON.stringify({ status: 'ok', version: PACKAGE_VERSION }));
    assert.equal(VERSION, PACKAGE_VERSION);
  });

  test('the JSON index at / names the same version', async () => {
    const t = await testApp(after);
    const index = (await t.call('GET', '/', { token: null, headers: { accept: 'application/json' } })).json<{ version: string }>();
    assert.equal(index.version, PACKAGE_VERSION);
  });

  test("the OpenAPI document describes it (the Health schema /healthz answers with); its info version is the interface's, 1.0.0 as specified", async () => {
    const t = await testApp(after);
    const document = (await t.call('GET', '/openapi.json', { token: null })).json<{
      info: { version: string };
      components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
    }>();
    // The API's version, which the specification fixes, not the release's (docs/upgrading.md: semantic versioning).
    assert.equal(document.info.version, '1.0.0');
    const health = document.components.schemas.Health!;
    assert.deepEqual(Object.keys(health.properties).sort(), ['status', 'version']);
    assert.deepEqual([...health.required].sort(), ['status', 'version']);
    assert.deepEqual(document.paths['/healthz']!.get!.responses['200']!.content!['application/json']!.schema, {
      $ref: '#/components/schemas/Health',
    });
    assert.deepEqual(document.paths['/readyz']!.get!.responses['200']!.content!['application/json']!.schema, {
      $ref: '#/components/schemas/Readiness',
    });
  });
});

describe('GET /readyz', () => {
  test('ready: {"status":"ready","store":…}', async () => {
    const t = await testApp(after);
    const response = await t.call('GET', '/readyz', { token: null });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'ready', store: t.store.kind });
  });
});
