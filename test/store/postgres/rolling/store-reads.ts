import assert from 'node:assert/strict';
import type { Transport } from './transport.js';

/**
 * The store read whole through one connection, for the deploy tests' checks after the load (load.ts,
 * upgrade.process.test.ts): every plant of its export, every event id of its feed.
 */

/** Every plant of the store's NDJSON export, by id. */
export async function readExport(client: Transport, token: string): Promise<Map<string, { id: number }>> {
  const exported = await client.request({
    method: 'GET',
    path: '/plants',
    headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' },
  });
  const text = exported.text;
  assert.equal(exported.status, 200, text);
  return new Map(
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const plant = JSON.parse(line) as { id: number };
        return [String(plant.id), plant] as const;
      }),
  );
}

/** Every event id of the feed, oldest first (GET /events pages). */
export async function readFeed(client: Transport, token: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const after = ids.at(-1);
    const response = await client.request({
      method: 'GET',
      path: `/events?limit=1000${after ? `&after=${after}` : ''}`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(response.status, 200, response.text);
    const page = JSON.parse(response.text) as Array<{ id: string }>;
    if (page.length === 0) return ids;
    ids.push(...page.map((event) => event.id));
  }
}
