import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import pg from 'pg';
import { countStatement, pageStatement, type Statement } from '../../../src/store/postgres/list-sql.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { PLANT_SORTS, type ListOptions } from '../../../src/store/store.js';
import { postgresBefore } from '../older-schema.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs } from '../../toolkit.js';

/**
 * Finding plants on PostgreSQL: each shape of request can be served by the index made for it (EXPLAIN),
 * a rare q or tag is (planned for its own value), migration plant_search builds the search for a store that holds
 * plants while writes go on, and without pg_trgm the service says so and searches anyway.
 */

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Subplan Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** How a node reads: its type, with its index and direction. */
const describeNode = (n: PlanNode) =>
  `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}${n['Scan Direction'] === 'Backward' ? ' backward' : ''}`;

const skipReason = needs('PostgreSQL search tests', postgresUnavailableReason());

if (skipReason) {
  test('PostgreSQL search', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);

  describe('postgres search: the index each request can be served by', async () => {
    const url = await server.createDatabase();
    const store = await PostgresStore.open(url, { poolSize: 2, timeoutMs: 10_000 });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    after(async () => {
      await client.end();
      await store.close();
    });
    // 200,000 plants over four common tags, with a rare tag and a rare word among them.
    await client.query(`INSERT INTO plants (id, name, tag)
      SELECT g, (ARRAY['Boston Fern', 'Areca Palm', 'Aloe Vera', 'Jade'])[g % 4 + 1] || ' ' || g || CASE WHEN g % 50000 = 0 THEN ' Zqxvia' ELSE '' END,
             CASE WHEN g % 40000 = 0 THEN 'rare' ELSE (ARRAY['tropical', 'succulent', 'fern', 'palm'])[g % 4 + 1] END
      FROM generate_series(1, 200000) g`);
    await client.query('ANALYZE plants');

    /** The plan of the plants fetched for a page (the CTE "fetched", or another), as node descriptions, under these settings. */
    async function fetched(statement: Statement, settings: string[] = [], cteName = 'fetched'): Promise<string[]> {
      await client.query('BEGIN');
      try {
        for (const setting of settings) await client.query(`SET LOCAL ${setting}`);
        const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
        const top = rows[0]!['QUERY PLAN'][0]!.Plan;
        const cte = nodes(top).find((n) => n['Subplan Name'] === `CTE ${cteName}`) ?? top;
        return nodes(cte).map(describeNode);
      } finally {
        await client.query('ROLLBACK');
      }
    }
    const page = (options: Omit<ListOptions, 'limit'>) => pageStatement({ limit: 100, ...options });
    // Small tables are read whole by preference; a large one would not be: show what the indexes allow.
    const indexesOnly = ['enable_seqscan = off', 'enable_sort = off'];

    const ordered: Array<[string, Omit<ListOptions, 'limit'>, string]> = [
      ['sort=id', {}, 'Index Scan plants_pkey'],
      ['sort=-id after', { sort: '-id', after: { id: 500 } }, 'Index Scan plants_pkey backward'],
      ['sort=name', { sort: 'name' }, 'plants_name_id'],
      ['sort=name after', { sort: 'name', after: { id: 5, name: 'Jade' } }, 'plants_name_id'],
      ['sort=-name after', { sort: '-name', after: { id: 5, name: 'Jade' } }, 'plants_name_id backward'],
      ['tag, sort=name', { tags: ['fern'], sort: 'name' }, 'plants_tag_name_id'],
      ['tags, sort=-name after', { tags: ['fern', 'palm'], sort: '-name', after: { id: 5, name: 'Jade' } }, 'plants_tag_name_id backward'],
    ];
    for (const [title, options, index] of ordered) {
      it(`${title}: ${index}, nothing sorted`, async () => {
        const plan = await fetched(page(options), indexesOnly);
        assert.ok(
          plan.some((n) => n.includes(index)),
          plan.join(' / '),
        );
        assert.ok(!plan.some((n) => n === 'Sort' || n.startsWith('Seq Scan')), plan.join(' / '));
      });
    }

    it('several tags: one index range per tag, merged in order (no sort of what they hold)', async () => {
      for (const sort of ['id', '-id', 'name'] as const) {
        const plan = await fetched(page({ tags: ['fern', 'palm', 'rare'], sort }), indexesOnly);
        assert.ok(plan.includes('Merge Append'), plan.join(' / '));
        assert.ok(!plan.some((n) => n === 'Sort' || n.startsWith('Seq Scan')), plan.join(' / '));
      }
    });

    it('a rare tag is read from its index, as planned for it', async () => {
      const plan = await fetched(page({ tags: ['rare'] }));
      assert.ok(
        plan.some((n) => /plants_tag_(name_)?id/.test(n)),
        plan.join(' / '),
      );
    });

    it('q can be served by the trigram index (any order), and a rare q is', async () => {
      for (const options of [{ q: 'fern' }, { q: 'FERN', sort: 'name' as const }, { q: 'écrin' }]) {
        const plan = await fetched(page(options), ['enable_seqscan = off', 'enable_indexscan = off']);
        assert.ok(plan.includes('Bitmap Index Scan plants_name_fold_trgm'), `${JSON.stringify(options)}: ${plan.join(' / ')}`);
      }
      const rare = await fetched(page({ q: 'ZQXVIA' }));
      assert.ok(rare.includes('Bitmap Index Scan plants_name_fold_trgm'), rare.join(' / '));
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON) ${countStatement({ q: 'zqxvia' }).text}`,
        countStatement({ q: 'zqxvia' }).values,
      );
      assert.ok(nodes(rows[0]!['QUERY PLAN'][0]!.Plan).map(describeNode).includes('Bitmap Index Scan plants_name_fold_trgm'));
      assert.equal(await store.plants.count({ q: 'zqxvia' }), 4);
    });

    it("q alone: its walk reads the order's index, nothing sorted; its matches are found by the trigram index, not that one", async () => {
      const orderIndex = /plants_pkey|plants_name_id/;
      for (const sort of PLANT_SORTS) {
        const walk = await fetched(page({ q: 'fern', sort }), [], 'walked');
        assert.ok(
          walk.some((n) => orderIndex.test(n)) && !walk.some((n) => n === 'Sort' || /Seq Scan|Bitmap/.test(n)),
          `${sort}: ${walk.join(' / ')}`,
        );
        const rare = await fetched(page({ q: 'ZQXVIA', sort }), [], 'sorted');
        assert.ok(rare.includes('Bitmap Index Scan plants_name_fold_trgm'), `${sort}: ${rare.join(' / ')}`);
        // A q a quarter of the names hold: read through the trigram index or the table, and sorted.
        const common = await fetched(page({ q: 'fern', sort }), [], 'sorted');
        assert.ok(!common.some((n) => orderIndex.test(n)) && common.includes('Sort'), `${sort}: ${common.join(' / ')}`);
      }
    });
  });

  describe('postgres migration plant_search', () => {
    it('builds the search for a store that holds plants, while writes go on, and once only', async () => {
      const url = await server.createDatabase();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // A store as the previous release left it: the migrations before plant_search, and some plants.
        await postgresBefore(client, 'plant_search');
        await client.query(
          `INSERT INTO plants (id, name, tag) SELECT g, CASE WHEN g % 2 = 0 THEN 'ÉCHEVERIA ' ELSE 'Fern ' END || g, 't' FROM generate_series(1, 25000) g`,
        );
        // Writes from another instance go on throughout.
        const writer = new pg.Client({ connectionString: url });
        await writer.connect();
        let writes = 0;
        let stop = false;
        const writing = (async () => {
          while (!stop) await writer.query('INSERT INTO plants (id, name) VALUES ($1, $2)', [100_000 + writes, `Written ${++writes} ÉCRIN`]);
        })();
        const store = await PostgresStore.open(url, { poolSize: 2, timeoutMs: 60_000 });
        stop = true;
        await writing;
        await writer.end();
        try {
          assert.ok(writes > 0, 'writes went on during the migration');
          assert.deepEqual(store.warnings, []);
          assert.equal(await store.plants.count({ q: 'échev' }), 12_500);
          assert.equal(await store.plants.count({ q: 'écrin' }), writes, 'rows written meanwhile are folded by the trigger');
          const { rows: unfolded } = await client.query<{ n: string }>(
            'SELECT count(*) AS n FROM plants WHERE name_fold IS DISTINCT FROM plant_fold(name)',
          );
          assert.equal(unfolded[0]!.n, '0');
          const { rows: indexes } = await client.query<{ name: string; valid: boolean }>(
            "SELECT indexrelid::regclass::text AS name, indisvalid AS valid FROM pg_index WHERE indrelid = 'plants'::regclass ORDER BY 1",
          );
          assert.deepEqual(indexes, [
            { name: 'plants_name_fold_trgm', valid: true },
            { name: 'plants_name_id', valid: true },
            { name: 'plants_pkey', valid: true },
            { name: 'plants_tag_id', valid: true },
            { name: 'plants_tag_name_id', valid: true },
          ]);
          const { rows: leftovers } = await client.query("SELECT 1 FROM pg_proc WHERE proname = 'plants_fold_names'");
          assert.equal(leftovers.length, 0, 'the fill procedure is dropped');
        } finally {
          await store.close();
        }
        // Opened again: nothing to do.
        const again = await PostgresStore.open(url, { poolSize: 1, timeoutMs: 10_000 });
        await again.close();
        const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM schema_migrations WHERE name = $1', ['plant_search']);
        assert.equal(rows[0]!.n, '1');
      } finally {
        await client.end();
      }
    });

    it('without the privilege to create pg_trgm: a warning, and q still finds by scanning', async () => {
      const url = await server.createDatabase();
      const role = `plain_${process.pid}`;
      const database = new URL(url).pathname.slice(1);
      // A role that owns its schema but may not create extensions in the database (pg_trgm is trusted:
      // creating it needs CREATE on the database, which this role lacks).
      await server.sql(`CREATE ROLE ${role} LOGIN`);
      await server.sql(`ALTER SCHEMA public OWNER TO ${role}`, database);
      const roleUrl = new URL(url);
      roleUrl.username = role;
      const store = await PostgresStore.open(roleUrl.toString(), { poolSize: 2, timeoutMs: 10_000 });
      try {
        assert.equal(store.warnings.length, 1);
        assert.match(store.warnings[0]!, /pg_trgm is not installed.*GET \/plants\?q=.*scan/);
        await store.plants.put({ id: 1, name: 'Boston Fern' });
        await store.plants.put({ id: 2, name: 'FERNLEAF' });
        assert.equal(await store.plants.count({ q: 'fern' }), 2);
        assert.equal((await store.plants.page({ q: 'fern', sort: 'name', limit: 1 })).json, '[{"id":1,"name":"Boston Fern"}]');
        const extensions = await server.sql<{ extname: string }>("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'", database);
        assert.equal(extensions.length, 0);
      } finally {
        await store.close();
      }
    });
  });
}
