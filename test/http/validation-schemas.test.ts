import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { compileEveryValidator, validatorCompiler } from '../../src/http/validation.js';
import { testApp } from '../helpers.js';

/**
 * Route validators are compiled when they first validate (src/http/validation.ts), and Ajv's check of each
 * schema against its meta-schema is left to this test: every schema of every route of the app, every part
 * (body, path, query, headers), checked and compiled in both passes, so a schema Ajv would refuse fails
 * here rather than on a route's first request.
 */
describe('the routes’ validators', () => {
  it('compiled on their route’s first request, answer as before: refusals name the field, valid requests pass', async () => {
    const app = await testApp(after);
    // A route's validator, compiled by its first request, answers as an eager one did: refusals with the
    // words of their schema, the whole body at once.
    const refused = await app.call('POST', '/plants', { body: { id: 'x', name: 5 } });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.body, /id/);
    assert.equal((await app.call('POST', '/plants', { body: { id: 1, name: 'fern' } })).statusCode, 200);
    assert.equal((await app.call('GET', '/plants?limit=abc')).statusCode, 400);
  });

  it("every route's schemas are valid schemas and compile", async () => {
    await testApp(after);
    // Every distinct schema of every route part of the app (routes share some: 33 in this release), not a handful.
    const count = compileEveryValidator();
    assert.ok(count >= 30, `the validators of every route: ${count}`);
  });

  it('a schema Ajv refuses fails the check, naming what is wrong', () => {
    validatorCompiler({
      schema: { type: 'object', properties: { name: { type: 'string', minLength: 'five' } } },
      httpPart: 'body',
      method: 'POST',
      url: '/bad',
    });
    assert.throws(() => compileEveryValidator(), /body schema: .*minLength/);
  });

  it('a keyword Ajv does not know fails the check too (strict mode)', () => {
    validatorCompiler({
      schema: { type: 'object', properties: { name: { type: 'string', lenght: 5 } } },
      httpPart: 'querystring',
      method: 'GET',
      url: '/bad',
    });
    assert.throws(() => compileEveryValidator(), /lenght|minLength/);
  });
});
