import { createServer, type ServerResponse } from 'node:http';
import { answer, EXPECTED_AUTH, fail, listen } from './bare-http.js';
import { openConnection, prepare } from '../src/store/sqlite/connection.js';
import { pageSql } from '../src/store/sqlite/list-sql.js';
import { GET_SQL } from '../src/store/sqlite/plants.js';

/**
 * The read prototype (issue 29): the least a node:http server does to answer GET /plants/{id} and a keyset
 * page of GET /plants?limit=&after= from an SQLite store, with the service's own SQL (the statement of
 * SqlitePlants.get, and pageSql of sort=id with and without a start key: the page's JSON made by SQLite,
 * one row more than the page to know whether more follow) on better-sqlite3, on the main thread. It
 * checks the bearer header as the baseline does, parses the id, limit and after, and answers the same
 * JSON as the service (the plant with its ETag; the page with a Link to the next one, by `after`). As the
 * durable prototype writes a turn's plants in one transaction, it reads a turn's requests in one read
 * transaction at the turn's end and answers them together, as the service does (store/sqlite/gathered-reads.ts):
 * without it, this prototype cost more CPU per GET than the service (187 against 97 µs/req in one run, pages
 * 449 against 315: bench/RESULTS.md), a floor the service was already under. Nothing else: no framework, no
 * validation beyond parsing, no logs, no cursor. Reads are measured as a share of it, to see what costs more
 * than reading itself. Usage: DATABASE_URL=file:… node dist/bench/read-prototype.js
 */

const PATH = (process.env.DATABASE_URL ?? '').replace(/^file:/, '');
const LIMIT_MAX = 1000;

const db = openConnection(PATH);
const get = prepare<[number], { id: number; name: string; tag: string | null; version: number }>(db, GET_SQL);
type Row = [json: string, id: number, name: string];
const firstPage = prepare<[Record<string, unknown>], Row>(db, pageSql({ sort: 'id', after: false, tags: 0, q: 'none' })).raw(true);
const pageAfter = prepare<[Record<string, unknown>], Row>(db, pageSql({ sort: 'id', after: true, tags: 0, q: 'none' })).raw(true);

function read(res: ServerResponse, idText: string): void {
  const id = Number(idText);
  if (!Number.isSafeInteger(id) || idText === '') return fail(res, 400, 'params.id must be an integer');
  const row = get.get(id);
  if (row === undefined) return fail(res, 404, `no plant with id ${id}`);
  const body = JSON.stringify(row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag });
  answer(res, 200, body, { etag: `"${row.version}"` });
}

function list(res: ServerResponse, query: URLSearchParams): void {
  const limit = Number(query.get('limit') ?? 100);
  const afterText = query.get('after');
  const after = afterText === null ? undefined : Number(afterText);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) return fail(res, 400, 'querystring.limit must be from 1 to 1000');
  if (after !== undefined && !Number.isSafeInteger(after)) return fail(res, 400, 'querystring.after must be an integer');
  const rows = after === undefined ? firstPage.all({ take: limit + 1 }) : pageAfter.all({ take: limit + 1, afterId: after });
  const count = Math.min(limit, rows.length);
  let json = '[';
  for (let i = 0; i < count; i++) json += i === 0 ? rows[i]![0] : `,${rows[i]![0]}`;
  const last = rows[count - 1];
  answer(res, 200, `${json}]`, rows.length > limit && last ? { link: `</plants?limit=${limit}&after=${last[1]}>; rel="next"` } : {});
}

/** The reads asked in this turn, run in one read transaction (one snapshot, one WAL-index lock) at its end. */
let turn: Array<() => void> = [];
const together = db.transaction((reads: Array<() => void>) => {
  for (const read of reads) read();
});

function atTurnEnd(read: () => void): void {
  if (turn.length === 0) {
    setImmediate(() => {
      const reads = turn;
      turn = [];
      if (reads.length === 1) reads[0]!();
      else together(reads);
    });
  }
  turn.push(read);
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/healthz') return answer(res, 200, '{"status":"ok"}');
  if (req.headers.authorization !== EXPECTED_AUTH) return fail(res, 401, 'missing or unknown bearer token');
  if (req.method === 'GET' && url.startsWith('/plants/')) return atTurnEnd(() => read(res, url.slice('/plants/'.length)));
  if (req.method === 'GET' && url.startsWith('/plants?')) return atTurnEnd(() => list(res, new URLSearchParams(url.slice('/plants?'.length))));
  fail(res, 404, 'no such resource');
});
listen(server, 'read prototype');
