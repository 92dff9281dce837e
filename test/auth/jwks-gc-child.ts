import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { JwtVerifier } from '../../src/auth/jwt.js';
import { AUDIENCE, ISSUER, mint, signingKey } from './identity-provider.js';

/**
 * Run by jwks-timeout.process.test.ts as `node --expose-gc`: a JWT verified against a JWKS that answers
 * only after 20 s, while the garbage collector runs every 10 ms. Prints how long the verification
 * waited, what it answered and what was reported, as one JSON line.
 */

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const collecting = setInterval(gc, 10);

const server = createServer((_request, response) => {
  setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}'), 20_000).unref();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };

const failures: string[] = [];
const verifier = JwtVerifier.fromConfig(
  { jwtJwksUrl: `http://127.0.0.1:${port}/jwks.json`, jwtPublicKey: '', jwtSecret: '', jwtIssuer: ISSUER, jwtAudience: AUDIENCE },
  (reason) => failures.push(reason),
)!;
const token = await mint(await signingKey('a'), { scope: 'plants:read' });
const started = performance.now();
let outcome: string;
try {
  const verdict = await verifier.verify(token);
  outcome = typeof verdict === 'string' ? `refused: ${verdict}` : 'accepted';
} catch (error) {
  outcome = `${(error as Error).name}: ${(error as Error).message}`;
}
const ms = performance.now() - started;
clearInterval(collecting);
verifier.close();
server.closeAllConnections();
server.close();
process.stdout.write(`${JSON.stringify({ ms, outcome, failures })}\n`);
