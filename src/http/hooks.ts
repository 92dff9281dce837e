import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { JwtVerifier } from '../auth/jwt.js';
import { TokenVerifier } from '../auth/tokens.js';
import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import { authHook } from './auth.js';
import { accessLogHook } from '../logging/logger.js';
import { OverloadMonitor } from './overload.js';
import { limitedAuthentication, MemoryRateLimiter, SharedRateLimiter } from './rate-limit.js';
import { installSecurity } from './security.js';

/**
 * What every request passes through before its handler, in this order: its id and the security
 * headers, the Host check and load shedding (refusing must cost less than serving, so these come
 * first); authentication (before the body is read) with the rate limits around it, by token or by
 * address. After the answer: one access line.
 */
export function installRequestHooks(app: FastifyInstance, settings: Config, store: Store, logger?: Logger): void {
  const overload = new OverloadMonitor(settings, (reason) =>
    reason === undefined
      ? app.log.warn('load back to normal: no longer shedding')
      : app.log.warn({ reason }, `overloaded: answering 503 until it passes (${reason})`),
  );
  installSecurity(app, settings, (request) => overload.refusal(request));
  app.addHook('onReady', (done) => (overload.start(), done()));
  app.addHook('onClose', (_app, done) => (overload.stop(), done()));

  // Counted by the store where it is shared by several instances (PostgreSQL), else in this process.
  const limit = settings.rateLimitPerMinute;
  const limiter = limit > 0 ? (store.rateCounter ? new SharedRateLimiter(limit, store.rateCounter) : new MemoryRateLimiter(limit)) : undefined;
  // JWTs when a key is configured; a JWKS is fetched once the app is ready, without holding up the start.
  const jwt = JwtVerifier.fromConfig(settings, (reason) =>
    app.log.warn({ reason }, 'cannot fetch the JWT keys from JWT_JWKS_URL (known keys, if any, keep serving)'),
  );
  if (jwt) {
    app.addHook('onReady', (done) => (jwt.warmUp(), done()));
    app.addHook('onClose', (_app, done) => (jwt.close(), done()));
  }
  const authenticate = authHook(new TokenVerifier(settings.tokens, store.tokens, jwt));
  app.addHook('onRequest', limiter ? limitedAuthentication(limiter, authenticate) : authenticate);

  const accessLog = accessLogHook(app.log, logger);
  if (accessLog) app.addHook('onResponse', accessLog);
}
