import type { FastifyBaseLogger } from 'fastify';
import type { EventStore } from '../store/event-store.js';

const SWEEP_MS = 3_600_000;

/**
 * Deletes the events older than EVENTS_RETENTION_DAYS (the newest always stays), at start and every hour,
 * in the background of the server process. Answers a function that stops it.
 */
export function sweepExpiredEvents(events: EventStore, retentionDays: number, log: Pick<FastifyBaseLogger, 'warn' | 'debug'>): () => void {
  const sweep = async () => {
    try {
      const deleted = await events.deleteExpired(Date.now() - retentionDays * 86_400_000);
      if (deleted > 0) log.debug({ deleted }, 'events: expired events deleted');
    } catch (error) {
      log.warn({ err: error }, 'events: could not delete expired events');
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), SWEEP_MS).unref();
  return () => clearInterval(timer);
}
