import cluster, { type Worker } from 'node:cluster';

/**
 * Several serving processes on one machine (WEB_CONCURRENCY > 1), with node:cluster: the primary
 * process serves nothing itself; it forks the workers, which share the listening port, replaces a
 * worker that crashes, and turns SIGTERM/SIGINT into one graceful stop of every worker.
 */

/** A worker that crashed after it served is replaced after this pause (no tight crash loop). */
const RESPAWN_DELAY_MS = 1000;

function say(text: string): void {
  process.stderr.write(`plant-store: ${text}\n`);
}

/**
 * Forks `count` workers and supervises them until they have all stopped; exits with 0 when every
 * worker stopped cleanly, 1 otherwise. A worker that dies before it ever listened means the start
 * failed (a port in use, say): then every worker is stopped and the primary exits 1. `onStop` is called
 * when a graceful stop begins (the metrics listener closes then).
 */
export function runPrimary(count: number, onStop: () => void = () => undefined): void {
  let stopping = false;
  let failed = false;
  const listened = new WeakSet<Worker>();

  const fork = () => {
    const worker = cluster.fork();
    worker.once('listening', () => listened.add(worker));
  };

  // A signal, not an IPC message: a worker still starting has no message listener yet, and would miss it.
  // (A worker ignores SIGINT: Ctrl-C reaches the whole process group, and the primary decides.)
  const stopAll = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };

  cluster.on('exit', (worker, code, signal) => {
    // Killed by SIGTERM: stopped before its handler was installed, with nothing in flight.
    const clean = (code === 0 && signal === null) || signal === 'SIGTERM';
    if (stopping) {
      if (!clean) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    if (!listened.has(worker)) {
      say(`worker ${worker.process.pid} exited (${signal ?? code}) before it served; stopping`);
      failed = true;
      stopping = true;
      stopAll();
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
      return;
    }
    say(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    setTimeout(() => {
      if (!stopping) fork();
    }, RESPAWN_DELAY_MS);
  });

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C means "now".
      say(`second ${signal}: killing the workers`);
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    say(`${signal}: stopping ${Object.keys(cluster.workers ?? {}).length} workers gracefully`);
    onStop();
    stopAll();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  say(`starting ${count} worker processes`);
  for (let i = 0; i < count; i++) fork();
}
