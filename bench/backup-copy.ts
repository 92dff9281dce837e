import { openConnection, prepare } from '../src/store/sqlite/connection.js';

/**
 * One copy of a live SQLite store by a method the service did not choose, for bench/backup.ts to set
 * beside it, in a process of its own (as the service's own backup runs) so that the load generator's
 * event loop never waits for it. Prints one JSON line.
 *
 *   node dist/bench/backup-copy.js vacuum SOURCE TARGET            VACUUM INTO alone (no check, no fsync)
 *   node dist/bench/backup-copy.js api SOURCE TARGET PAGES LIMIT_MS the online backup API, PAGES pages a
 *                                                                  step (-1: all at once), given up after LIMIT_MS
 */

const [method, source, target, pages = '100', limit = '60000'] = process.argv.slice(2);
const db = openConnection(source!, { fileMustExist: true });
db.exec('PRAGMA busy_timeout = 10000');
const started = performance.now();

if (method === 'vacuum') {
  db.exec('PRAGMA synchronous = OFF');
  prepare(db, 'VACUUM INTO ?').run(target);
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - started, finished: true })}\n`);
} else {
  // The source changed by another connection (the server's writer) makes SQLite start the copy again.
  let restarts = 0;
  let remaining = Infinity;
  const perStep = Number(pages) < 0 ? 2 ** 31 - 1 : Number(pages);
  const gaveUp = new Error('gave up');
  // eslint-disable-next-line no-restricted-syntax -- measured here only; the service never makes a Backup object (Node 24: connection.ts)
  db.backup(target!, {
    progress: ({ remainingPages }) => {
      if (remainingPages > remaining) restarts++;
      remaining = remainingPages;
      if (performance.now() - started > Number(limit)) throw gaveUp;
      return perStep;
    },
  }).then(
    () => process.stdout.write(`${JSON.stringify({ ms: performance.now() - started, finished: true, restarts })}\n`),
    (error: unknown) => {
      if (error !== gaveUp) throw error;
      process.stdout.write(`${JSON.stringify({ ms: performance.now() - started, finished: false, restarts })}\n`);
    },
  );
}
