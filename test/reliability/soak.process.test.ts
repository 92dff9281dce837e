import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { request, startServer } from '../process.js';
import { needs, sleep } from '../toolkit.js';

/**
 * Soak: the real server under mixed load (reads, lists, creates, replacements, patches, deletes and a
 * share of bad requests) from many clients for a bounded time. Only documented statuses come back, and
 * the process's resident memory levels off instead of growing with the requests served.
 * SOAK_SECONDS sets the duration (default 10).
 */
const SECONDS = Number(process.env.SOAK_SECONDS ?? 10);
const CLIENTS = 16;
const TOKEN = 'soak-test-token-0123456789abcdefgh';
const DOCUMENTED = new Set([200, 201, 204, 400, 404, 412, 503]);

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

test(
  `soak: ${SECONDS} s of mixed load, only documented answers, memory levels off`,
  {
    timeout: (SECONDS + 120) * 1000,
    skip: needs('the soak test', process.platform !== 'linux' && 'it reads the server memory from /proc (Linux only)'),
  },
  async (t) => {
    const dir = tempDir(after);
    const server = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'soak.db')}`, PLANT_STORE_TOKENS: TOKEN, LOG_LEVEL: 'info' } });
    const pid = server.child.pid!;
    const statuses = new Map<number, number>();
    const samples: number[] = [];
    const deadline = Date.now() + SECONDS * 1000;

    async function client(c: number): Promise<void> {
      for (let n = 0; Date.now() < deadline; n++) {
        const id = (c * 7919 + n * 31) % 5000;
        const op = n % 10;
        const [method, url, body] =
          op < 3
            ? ['GET', `/plants/${id}`, undefined]
            : op === 3
              ? ['GET', `/plants?limit=50&after=${id}`, undefined]
              : op < 6
                ? ['POST', '/plants', JSON.stringify({ id, name: `plant ${id} ${n}`, tag: `t${n % 5}` })]
                : op === 6
                  ? ['PUT', `/plants/${id}`, JSON.stringify({ name: `put ${n}` })]
                  : op === 7
                    ? ['PATCH', `/plants/${id}`, JSON.stringify({ tag: null })]
                    : op === 8
                      ? ['DELETE', `/plants/${id}`, undefined]
                      : ['POST', '/plants', '{"id": "not a number", "name": 1}'];
        const answer = await request(`${server.url}${url}`, { method, token: TOKEN, body });
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      }
    }
    const sampler = (async () => {
      while (Date.now() < deadline) {
        samples.push(rssMb(pid));
        await sleep(250);
      }
    })();
    await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), sampler]);

    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    const summary = [...statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    const undocumented = [...statuses.keys()].filter((s) => !DOCUMENTED.has(s));
    assert.deepEqual(undocumented, [], `undocumented statuses: ${summary}`);
    assert.ok((statuses.get(200) ?? 0) > total / 4, `mostly served: ${summary}`);
    // Levels off: the peak of the last third is not far above the peak of the middle third (after warm-up).
    const third = Math.floor(samples.length / 3);
    const middle = Math.max(...samples.slice(third, 2 * third));
    const last = Math.max(...samples.slice(2 * third));
    assert.ok(last < middle * 1.25 + 16, `resident memory grew from ${middle.toFixed(0)} MiB to ${last.toFixed(0)} MiB`);
    t.diagnostic(
      `${total} requests in ${SECONDS} s (${Math.round(total / SECONDS)}/s, ${CLIENTS} clients); statuses ${summary}; ` +
        `RSS ${samples[0]!.toFixed(0)} MiB at start, peak ${middle.toFixed(0)} MiB mid-run, ${last.toFixed(0)} MiB at the end`,
    );
    assert.ok(server.running);
    await server.stop('SIGTERM');
  },
);
