import assert from 'node:assert/strict';
import { request } from '../../../process.js';
import { until } from '../../../toolkit.js';
import type { Instance } from './fleet.js';

/**
 * What one release writes, the other reads: run against two instances directly (not through the balancer),
 * one of each release on the migrated schema, in both directions, every kind of write the API has, each
 * read back, replayed or undone through the other release: plants (POST, PUT, PATCH, DELETE), keyed POSTs
 * and their replays (plants, imports, tokens, webhook endpoints), imports, tokens (made, used, revoked),
 * webhook endpoints, and the change feed's pages. A migration that breaks the release before breaks one
 * of these, whatever the load through the balancer happened to send where.
 */
export class CrossVersion {
  /** Plant changes made here: each is one event of the feed. */
  events = 0;
  private next = 900_000_000_000;

  constructor(
    private readonly token: string,
    /** Where probe webhook endpoints deliver; they are removed again at once. */
    private readonly hooks: string,
    /**
     * Runs its work with no plant write of the load in flight. On PostgreSQL, in 1.0.0, a plant write whose
     * statement read an endpoint that a deletion removes before it inserts its message fails (500: the
     * outbox's foreign key on webhook_messages); mended in 1.1.0 (store/postgres/outbox.ts,
     * outbox-race.process.test.ts), but the release before runs here: endpoints are deleted with the load paused.
     */
    private readonly quiet: <T>(work: () => Promise<T>) => Promise<T>,
  ) {}

  /** Everything `writer` writes is read, replayed and undone through `reader`. */
  async across(writer: Instance, reader: Instance): Promise<void> {
    const what = `${writer.release?.name ?? '?'} (${writer.name}) -> ${reader.release?.name ?? '?'} (${reader.name})`;
    const feedBefore = await this.feedPage(writer, undefined);
    const start = feedBefore.at(-1)?.id;
    await this.plants(writer, reader, what);
    await this.keyed(writer, reader, what);
    await this.tokens(writer, reader, what);
    await this.webhooks(writer, reader, what);
    await this.lists(writer, reader, what);
    // The feed reads the same through both, events written by either.
    const [fromWriter, fromReader] = await Promise.all([this.feedPage(writer, start), this.feedPage(reader, start)]);
    // Read at about the same moment while the load writes: the shorter is the other's beginning.
    const both = Math.min(fromWriter.length, fromReader.length);
    assert.ok(both >= 8, `${what}: the probes' events are in the feed`);
    assert.deepEqual(fromReader.slice(0, both), fromWriter.slice(0, both), `${what}: the change feed's pages`);
  }

  private async plants(writer: Instance, reader: Instance, what: string): Promise<void> {
    const id = this.id();
    await this.expect(writer, 'POST', '/plants', { body: `{"id":${id},"name":"across","tag":"x"}` }, 200, what);
    await this.expect(reader, 'GET', `/plants/${id}`, {}, 200, what, `{"id":${id},"name":"across","tag":"x"}`);
    const other = this.id();
    await this.expect(writer, 'PUT', `/plants/${other}`, { body: '{"name":"put"}' }, 201, what);
    await this.expect(reader, 'PATCH', `/plants/${other}`, { body: '{"tag":"patched"}' }, 200, what, `{"id":${other},"name":"put","tag":"patched"}`);
    await this.expect(writer, 'GET', `/plants/${other}`, {}, 200, what, `{"id":${other},"name":"put","tag":"patched"}`);
    await this.expect(reader, 'DELETE', `/plants/${other}`, {}, 204, what);
    await this.expect(writer, 'GET', `/plants/${other}`, {}, 404, what);
    const rows = [this.id(), this.id()];
    const body = rows.map((row) => `{"id":${row},"name":"imported"}`).join('\n');
    await this.expect(
      writer,
      'POST',
      '/plants/import',
      { body, headers: { 'content-type': 'application/x-ndjson' } },
      200,
      what,
      '{"created":2,"replaced":0}',
    );
    for (const row of rows) await this.expect(reader, 'GET', `/plants/${row}`, {}, 200, what, `{"id":${row},"name":"imported"}`);
    this.events += 1 + 3 + 2;
  }

  /** Every keyed POST answered by the writer, replayed by the reader: the same status and bytes, marked replayed. */
  private async keyed(writer: Instance, reader: Instance, what: string): Promise<void> {
    const id = this.id();
    const rows = [this.id(), this.id()].map((row) => `{"id":${row},"name":"keyed import"}`).join('\n');
    const posts: Array<[string, string, Record<string, string>]> = [
      ['/plants', `{"id":${id},"name":"keyed","tag":"k"}`, {}],
      ['/plants/import', rows, { 'content-type': 'application/x-ndjson' }],
      ['/tokens', `{"name":"across-${id}","scopes":["plants:read"]}`, {}],
    ];
    for (const [path, body, headers] of posts) {
      const key = `across-${path}-${id}`;
      const first = await this.expect(
        writer,
        'POST',
        path,
        { body, headers: { ...headers, 'idempotency-key': key } },
        path === '/tokens' ? 201 : 200,
        what,
      );
      const again = await request(`${reader.url}${path}`, {
        method: 'POST',
        token: this.token,
        body,
        headers: { ...headers, 'idempotency-key': key },
      });
      assert.equal(again.status, first.status, `${what}: the replay of POST ${path}: ${again.text}`);
      assert.equal(again.text, first.text, `${what}: the replay of POST ${path} answers the same bytes`);
      assert.equal(again.headers.get('idempotent-replayed'), 'true', `${what}: the replay of POST ${path} says so`);
    }
    this.events += 1 + 2;
  }

  /** A token made through the writer works through the reader; revoked through the reader, the writer refuses it. */
  private async tokens(writer: Instance, reader: Instance, what: string): Promise<void> {
    const made = await this.expect(writer, 'POST', '/tokens', { body: `{"name":"across-token-${this.id()}","scopes":["plants:read"]}` }, 201, what);
    const token = JSON.parse(made.text) as { id: string; secret: string };
    const used = await request(`${reader.url}/plants?limit=1`, { token: token.secret });
    assert.equal(used.status, 200, `${what}: a token made through the writer, used through the reader: ${used.text}`);
    await this.expect(reader, 'GET', `/tokens/${token.id}`, {}, 200, what);
    await this.expect(reader, 'DELETE', `/tokens/${token.id}`, {}, 204, what);
    await until(
      async () => (await request(`${writer.url}/plants?limit=1`, { token: token.secret })).status === 401,
      `${what}: the revoked token refused`,
      { timeoutMs: 10_000 },
    );
  }

  /** An endpoint registered (with a key) through the writer: replayed, read, listed and removed through the reader. */
  private async webhooks(writer: Instance, reader: Instance, what: string): Promise<void> {
    const key = `across-hook-${this.id()}`;
    const body = JSON.stringify({ url: this.hooks, events: ['plant.deleted'], description: 'cross-version probe' });
    const made = await this.expect(writer, 'POST', '/webhooks', { body, headers: { 'idempotency-key': key } }, 201, what);
    const again = await request(`${reader.url}/webhooks`, { method: 'POST', token: this.token, body, headers: { 'idempotency-key': key } });
    assert.equal(again.text, made.text, `${what}: the replay of POST /webhooks`);
    const { id } = JSON.parse(made.text) as { id: string };
    await this.expect(reader, 'GET', `/webhooks/${id}`, {}, 200, what);
    await this.expect(reader, 'GET', `/webhooks/${id}/deliveries`, {}, 200, what);
    await this.expect(writer, 'PATCH', `/webhooks/${id}`, { body: '{"description":"patched"}' }, 200, what);
    await this.quiet(() => this.expect(reader, 'DELETE', `/webhooks/${id}`, {}, 204, what));
    await this.expect(writer, 'GET', `/webhooks/${id}`, {}, 404, what);
  }

  /**
   * A list's next page, as the writer's Link gives it, is read through the reader: the new release writes
   * its Links in the old one's forms (PAGE_LINKS=1.0, set on every instance), so a client sent from one
   * to the other pages on. Plants in both orders, the feed, tokens: each has a next page here.
   */
  private async lists(writer: Instance, reader: Instance, what: string): Promise<void> {
    for (let i = 0; i < 2; i++) {
      await this.expect(writer, 'POST', '/tokens', { body: `{"name":"across-list-${this.id()}","scopes":["plants:read"]}` }, 201, what);
    }
    for (const list of ['/plants?limit=1', '/plants?limit=1&sort=name', '/events?limit=1', '/tokens?limit=1']) {
      const page = await this.expect(writer, 'GET', list, {}, 200, what);
      const next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
      assert.ok(next, `${what}: GET ${list} through ${writer.name} has a next page: ${page.headers.get('link')}`);
      await this.expect(reader, 'GET', next, {}, 200, `${what}: the Link of GET ${list}`);
    }
  }

  private async feedPage(instance: Instance, after: string | undefined): Promise<Array<{ id: string }>> {
    const answer = await this.expect(instance, 'GET', `/events?limit=1000${after ? `&after=${after}` : ''}`, {}, 200, 'the feed');
    return JSON.parse(answer.text) as Array<{ id: string }>;
  }

  private async expect(
    instance: Instance,
    method: string,
    path: string,
    options: { body?: string; headers?: Record<string, string> },
    status: number,
    what: string,
    text?: string,
  ): Promise<{ status: number; text: string; headers: Headers }> {
    const answer = await request(`${instance.url}${path}`, { method, token: this.token, ...options });
    assert.equal(answer.status, status, `${what}: ${method} ${path} through ${instance.name} (${instance.release?.name ?? '?'}): ${answer.text}`);
    if (text !== undefined) assert.equal(answer.text, text, `${what}: ${method} ${path} through ${instance.name}`);
    return answer;
  }

  private id(): number {
    return this.next++;
  }
}
