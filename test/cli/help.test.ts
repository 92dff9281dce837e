import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAction } from '../../src/cli/command.js';
import { actionHelp } from '../../src/cli/help.js';
import { allCommands } from '../../src/cli/main.js';

/**
 * One command's help fits a screen: at most 15 lines (the first hour's rule; `token create --help` was 24,
 * a paragraph about retries among them). The details are docs/cli.md's.
 */

/** The tool's own list: a command added there is walked here. */
const COMMANDS = allCommands(() => Promise.resolve());

/** Every action's help, as `plant-store <command> [<action>] --help` prints it. */
function everyHelp(): Array<[string, string]> {
  return COMMANDS.flatMap((command) =>
    isAction(command.actions)
      ? [[command.name, actionHelp(command, undefined, command.actions)] as [string, string]]
      : Object.entries(command.actions).map(([name, action]): [string, string] => [`${command.name} ${name}`, actionHelp(command, name, action)]),
  );
}

describe("each action's help", () => {
  it('is at most 15 lines, with a service named in the environment too', () => {
    const saved = { url: process.env.PLANT_STORE_URL, token: process.env.PLANT_STORE_TOKEN };
    try {
      for (const url of [undefined, 'https://plants.example.com']) {
        if (url === undefined) delete process.env.PLANT_STORE_URL;
        else process.env.PLANT_STORE_URL = url;
        for (const [path, help] of everyHelp()) {
          const lines = help.trimEnd().split('\n');
          assert.ok(lines.length <= 15, `plant-store ${path} --help is ${lines.length} lines:\n${help}`);
          assert.match(lines[0]!, new RegExp(`^Usage: plant-store ${path}`));
        }
      }
    } finally {
      for (const [name, value] of [
        ['PLANT_STORE_URL', saved.url],
        ['PLANT_STORE_TOKEN', saved.token],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('token create: its usage, the scopes, and where it works, with the rest in docs/cli.md', () => {
    const help = everyHelp().find(([path]) => path === 'token create')![1];
    assert.match(help, /^Usage: plant-store token create --name NAME \[--scope SCOPE\]\.\.\. \[--url URL\]\n/);
    assert.match(help, /plants:read, plants:write, webhooks:manage, events:read, tokens:manage/);
    assert.match(help, /\(docs\/cli\.md\)/);
    assert.match(help, /^Through a service: /m);
    assert.doesNotMatch(help, /Idempotency-Key/, 'the retry is told in docs/cli.md');
  });
});
