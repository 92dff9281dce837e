import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PAGE_CSP } from '../http/security.js';
import { ASSET_DIR, PAGE_HTML, START_SCRIPT } from './page.js';
import { notModifiedRead } from '../http/caching.js';
import { once } from '../http/lazy.js';

/** A file the docs page needs, held in memory with its validator. */
interface StaticFile {
  body: Buffer;
  type: string;
  /** A strong ETag: the content's hash, so it changes exactly when the file does (an upgrade of swagger-ui-dist). */
  etag: string;
}

function staticFile(body: Buffer | string, type: string): StaticFile {
  const bytes = Buffer.from(body);
  return { body: bytes, type, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` };
}

/**
 * A file of the installed swagger-ui-dist, wherever npm put the package: found now (a missing package stops
 * the start), read on the first request for it.
 */
function swaggerUiFile(name: string, type: string): () => StaticFile {
  const path = createRequire(import.meta.url).resolve(`swagger-ui-dist/${name}`);
  return once(() => staticFile(readFileSync(path), type));
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';

/** The page and its files, by name, each read on its first request (the bundle alone is about 1.7 MB) and then shared by every app of this process. */
let files: { page: () => StaticFile; assets: Map<string, () => StaticFile> } | undefined;
function docsFiles(): NonNullable<typeof files> {
  return (files ??= {
    page: once(() => staticFile(PAGE_HTML, 'text/html; charset=utf-8')),
    assets: new Map([
      ['swagger-ui-bundle.js', swaggerUiFile('swagger-ui-bundle.js', JAVASCRIPT)],
      ['swagger-ui.css', swaggerUiFile('swagger-ui.css', 'text/css; charset=utf-8')],
      ['favicon.png', swaggerUiFile('favicon-32x32.png', 'image/png')],
      ['start.js', once(() => staticFile(START_SCRIPT, JAVASCRIPT))],
    ]),
  });
}

/**
 * Cache-Control no-cache: browsers keep the files and revalidate them on each visit, which costs a 304
 * instead of the whole bundle. Longer freshness would let a cached bundle outlive an upgrade, as the URLs
 * stay.
 */
function serve(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  reply.header('etag', file.etag).header('cache-control', 'no-cache');
  if (notModifiedRead(request, file.etag)) return reply.code(304).send();
  return reply.type(file.type).send(file.body);
}

/**
 * GET /docs: the API's interactive reference (Swagger UI on /openapi.json), and the files it loads,
 * all from the service itself. Public, like /openapi.json. These routes have no schema: they are for
 * browsers, not part of the JSON API, so the OpenAPI document leaves them out.
 */
export const docsRoutes: FastifyPluginCallbackTypebox = (app, _options, done) => {
  const { page, assets } = docsFiles();
  app.get('/docs', { config: { auth: 'public' } }, async (request, reply) => {
    reply.header('content-security-policy', PAGE_CSP);
    return serve(request, reply, page());
  });
  // /docs/ is the same page to a person, but its relative links would resolve under /docs/docs/: send the
  // browser to /docs. Relative (../docs), so that it holds behind a proxy that serves the API under a prefix.
  app.get('/docs/', { config: { auth: 'public' } }, async (_request, reply) => reply.code(301).header('location', '../docs').send());
  // One route per file: any other path under /docs is the service's ordinary 404.
  for (const [name, file] of assets) {
    app.get(`/${ASSET_DIR}/${name}`, { config: { auth: 'public' } }, async (request, reply) => serve(request, reply, file()));
  }
  done();
};
