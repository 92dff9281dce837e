import type { FastifyReply } from 'fastify';

/**
 * The answers a release before outcomes kept under Idempotency-Keys (store/idempotency.ts: EarlierAnswer),
 * replayed as they were kept, as docs/idempotency.md promises: JSON text with a JSON type, sent as it is,
 * the same bytes as the first time. None is made any more; they are gone once the last has expired
 * (IDEMPOTENCY_KEY_TTL after the upgrade, 30 days at most), and this module with them.
 */
export function sendEarlierAnswer(reply: FastifyReply, kept: unknown): FastifyReply {
  const { status, headers, body } = kept as { status: number; headers: Record<string, string>; body: string };
  return reply.code(status).headers(headers).send(body);
}
