import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAction, UsageError, type Action } from '../../src/cli/command.js';
import { selection } from '../../src/cli/plant-args.js';

/** An action with an option of listed values, free-text options and a repeated one, as the commands declare them. */
const action: Action = {
  summary: 'a test action',
  options: {
    sort: { type: 'string', value: 'ORDER', choices: ['id', '-id', 'name', '-name'], help: 'the order' },
    q: { type: 'string', value: 'TEXT', help: 'free text' },
    name: { type: 'string', value: 'NAME', help: 'a name' },
    tag: { type: 'string', value: 'TAG', multiple: true, help: 'repeatable' },
  },
  run: () => Promise.resolve(),
};

function given(...argv: string[]) {
  const parsed = parseAction(action, argv);
  assert.equal(parsed.help, false);
  return parsed.given;
}

function refused(argv: string[], message: RegExp): void {
  assert.throws(
    () => parseAction(action, argv),
    (error: unknown) => error instanceof UsageError && message.test(error.message),
  );
}

describe('option values that start with a dash', () => {
  it('takes a listed value that starts with one: --sort -name, --sort -id', () => {
    assert.equal(given('--sort', '-name').string('sort'), '-name');
    assert.equal(given('--sort', '-id').string('sort'), '-id');
    assert.equal(given('--sort=-name').string('sort'), '-name');
  });

  it('takes free text that starts with one, and a lone dash', () => {
    assert.equal(given('--q', '-leaf').string('q'), '-leaf');
    assert.equal(given('--name', '-').string('name'), '-');
    assert.deepEqual(given('--tag', '-x', '--tag', 'y').strings('tag'), ['-x', 'y']);
  });

  it('still checks a listed value: a dashed value not in the list is refused with the list', () => {
    refused(['--sort', '-nam'], /^--sort must be id, -id, name or -name, got "-nam"$/);
  });

  it('refuses a long option or -h where a value should be: the value was forgotten', () => {
    refused(['--name', '--q', 'x'], /^--name needs a value: --name NAME$/);
    refused(['--name', '-h'], /^--name needs a value: --name NAME$/);
    refused(['--sort'], /^--sort needs a value: --sort ORDER$/);
  });

  it('takes anything after = as it is', () => {
    assert.equal(given('--name=--odd').string('name'), '--odd');
  });
});

describe("a list's filters (plant-args.ts selection): the bounds GET /plants sets, on the store as through a service", () => {
  const bound = (...argv: string[]) => selection(given(...argv));

  it('takes up to 100 characters of --q, 20 tags, 64 characters a tag', () => {
    assert.equal(bound('--q', 'é'.repeat(100)).q, 'é'.repeat(100));
    assert.equal(bound(...Array.from({ length: 20 }, (_, i) => ['--tag', `t${i}`]).flat()).tags?.length, 20);
    assert.deepEqual(bound('--tag', '🌵'.repeat(64)).tags, ['🌵'.repeat(64)]);
  });

  it('refuses past them, in words, as usage errors', () => {
    assert.throws(() => bound('--q', 'x'.repeat(101)), /--q must be at most 100 characters, got 101$/);
    assert.throws(() => bound(...Array.from({ length: 21 }, (_, i) => ['--tag', `t${i}`]).flat()), /--tag may be given at most 20 times, got 21/);
    assert.throws(() => bound('--tag', 'ok', '--tag', 'x'.repeat(65)), /--tag must be at most 64 characters, got 65/);
    assert.throws(() => bound('--q', ''), /--q must not be empty/);
  });
});
