import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { SCOPES } from '../../src/model/scopes.js';
import { consoleModule } from './modules.js';

/**
 * The Tokens view's decisions that need no browser (console/src/tokens/rules.ts): the scopes a form offers,
 * the note on the tokens GET /tokens does not list; and the Idempotency-Key of a form's submissions
 * (console/src/submissions.ts, which Add endpoint and New plant use too).
 */

type Attempt = { answered: true; status: number; code?: string } | { answered: false };
interface Submissions {
  keyFor(body: string): string;
  ended(attempt: Attempt): void;
}
interface RulesModule {
  SCOPE_WORDS: Record<string, string>;
  grantable(held: readonly string[]): { offered: string[]; withheld: string[] };
  unlistedNote(header: string | null): string;
}
interface SubmissionsModule {
  newKey(): string;
  Submissions: new (makeKey?: () => string) => Submissions;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the console: the Tokens view’s rules', () => {
  let m: RulesModule & SubmissionsModule;
  before(async () => {
    m = { ...(await consoleModule<RulesModule>('tokens/rules.ts')), ...(await consoleModule<SubmissionsModule>('submissions.ts')) };
  });

  it('knows every scope of the service, in its order, each with words', () => {
    assert.deepEqual(Object.keys(m.SCOPE_WORDS), [...SCOPES]);
    for (const scope of SCOPES) assert.ok(m.SCOPE_WORDS[scope]!.length > 5, scope);
  });

  it('offers only the scopes the token signed in holds, in the service’s order; the others are withheld', () => {
    assert.deepEqual(m.grantable([...SCOPES]), { offered: [...SCOPES], withheld: [] });
    assert.deepEqual(m.grantable(['tokens:manage', 'plants:read']), {
      offered: ['plants:read', 'tokens:manage'],
      withheld: ['plants:write', 'webhooks:manage', 'events:read'],
    });
    // tokens:manage alone makes nothing (the service refuses it): nothing is offered.
    assert.deepEqual(m.grantable(['tokens:manage']), { offered: [], withheld: [...SCOPES] });
    assert.deepEqual(m.grantable([]), { offered: [], withheld: [...SCOPES] });
  });

  it('says which tokens the service accepts but does not list, from Unlisted-Token-Sources', () => {
    const both = 'Static tokens and JWTs are also accepted; they are not managed here.';
    assert.equal(m.unlistedNote('static, jwt'), both);
    assert.equal(m.unlistedNote('static,jwt'), both);
    assert.equal(m.unlistedNote(' static ,  jwt , static'), both);
    assert.equal(m.unlistedNote('static'), 'Static tokens are also accepted; they are not managed here.');
    assert.equal(m.unlistedNote('jwt'), 'JWTs are also accepted; they are not managed here.');
    assert.equal(m.unlistedNote('jwt, static'), 'JWTs and Static tokens are also accepted; they are not managed here.');
    // A kind a newer service names is still said, by its name.
    assert.equal(
      m.unlistedNote('static, jwt, mtls'),
      'Static tokens, JWTs and Tokens of the kind "mtls" are also accepted; they are not managed here.',
    );
    for (const none of [null, '', ' ', ', ,']) assert.equal(m.unlistedNote(none), '', String(none));
  });

  it('makes random version 4 UUIDs', () => {
    const keys = new Set(Array.from({ length: 200 }, () => m.newKey()));
    assert.equal(keys.size, 200);
    for (const key of keys) assert.match(key, UUID_V4);
  });

  it('gives each submission a new key, and a retry of one whose outcome is unknown the same key', () => {
    let made = 0;
    const submissions = new m.Submissions(() => `key-${++made}`);
    const body = '{"name":"ci","scopes":["plants:read"]}';

    // Answered (made, or refused): the next submission of the same body is a new one.
    assert.equal(submissions.keyFor(body), 'key-1');
    submissions.ended({ answered: true, status: 201 });
    assert.equal(submissions.keyFor(body), 'key-2');
    submissions.ended({ answered: true, status: 409, code: 'token_name_taken' });
    assert.equal(submissions.keyFor(body), 'key-3', 'the 409 of a name taken is final');
    submissions.ended({ answered: true, status: 400 });

    // No answer: the retry of the same body is sent with the same key, and again while the outcome is unknown.
    assert.equal(submissions.keyFor(body), 'key-4');
    submissions.ended({ answered: false });
    assert.equal(submissions.keyFor(body), 'key-4');
    submissions.ended({ answered: true, status: 503 });
    assert.equal(submissions.keyFor(body), 'key-4', 'a 5xx leaves the outcome unknown');
    submissions.ended({ answered: true, status: 409, code: 'token_name_taken' });
    assert.equal(submissions.keyFor(body), 'key-5', 'the 409 of a name taken is final, on a retry too');
    submissions.ended({ answered: false });
    assert.equal(submissions.keyFor(body), 'key-5');
    submissions.ended({ answered: true, status: 409, code: 'idempotency_key_in_use' });
    assert.equal(submissions.keyFor(body), 'key-5', 'the 409 of a key in use: the first attempt may still run');
    submissions.ended({ answered: true, status: 201 });
    assert.equal(submissions.keyFor(body), 'key-6', 'answered at last: done');
    submissions.ended({ answered: false });

    // Another body after an unknown outcome is another submission: a new key (the old one would be 422).
    assert.equal(submissions.keyFor('{"name":"ci2","scopes":["plants:read"]}'), 'key-7');
    submissions.ended({ answered: false });
    assert.equal(submissions.keyFor(body), 'key-8');
  });

  it('uses random UUIDs as keys by default', () => {
    const submissions = new m.Submissions();
    const key = submissions.keyFor('{}');
    assert.match(key, UUID_V4);
    submissions.ended({ answered: false });
    assert.equal(submissions.keyFor('{}'), key);
  });
});
