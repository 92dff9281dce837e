import assert from 'node:assert/strict';
import { describe, type Failure } from './feed-consumer.js';
import type { Answer, Origin, Transport } from './transport.js';

/**
 * The requests of the deploy tests' load (load.ts), one at a time through a connection of the load's: each
 * counted by what it is, its answer checked against the status and body expected, and anything else (an
 * error of the connection included) recorded as a failure with what was sent and what came back.
 */

export interface Call {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  token?: string;
}

export class CheckedCalls {
  /** Requests sent, by what they were. */
  readonly counts = new Map<string, number>();

  constructor(
    private readonly to: Origin,
    private readonly failures: Failure[],
  ) {}

  /** Sends the call; the answer when its status is `status` and its body (when given) equals `body` as JSON, else a failure. */
  async send(client: Transport, kind: string, call: Call, status: number, body?: unknown): Promise<Answer | undefined> {
    const answer = await this.call(client, kind, call);
    if (!answer) return undefined;
    const parsed = parseJson(answer.text);
    if (answer.status !== status || (body !== undefined && !sameJson(parsed, body))) {
      this.fail(kind, call, `${answer.status} ${answer.text.slice(0, 300)}`);
      return undefined;
    }
    return answer;
  }

  /** Sends the call; its answer whatever it is, or undefined (a failure) when none came. */
  async call(client: Transport, kind: string, call: Call): Promise<Answer | undefined> {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    const headers: Record<string, string> = { authorization: `Bearer ${call.token ?? this.to.token}`, ...call.headers };
    if (call.body !== undefined) headers['content-type'] ??= 'application/json';
    try {
      return await client.request({ method: call.method, path: call.path, headers, ...(call.body === undefined ? {} : { body: call.body }) });
    } catch (error) {
      this.fail(kind, call, describe(error));
      return undefined;
    }
  }

  fail(kind: string, call: Call, detail: string): void {
    this.failures.push({ what: `${kind}: ${call.method} ${call.path}`, detail, at: Date.now() });
  }
}

export function assertNoFailures(failures: readonly Failure[], requests: number): void {
  if (failures.length === 0) return;
  const first = failures
    .slice(0, 20)
    .map((f) => `  ${new Date(f.at).toISOString()} ${f.what}: ${f.detail}`)
    .join('\n');
  assert.fail(`${failures.length} of ${requests} requests failed; the first ${Math.min(20, failures.length)}:\n${first}`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    assert.deepEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
