import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAction, UsageError, type Action } from '../../src/cli/command.js';

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
