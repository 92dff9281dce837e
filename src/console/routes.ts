import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { quality } from '../http/accept.js';
import { HttpError, NoContent } from '../http/errors.js';
import { PAGE_CSP } from '../http/security.js';
import { VERSION } from '../version.js';
import { notModifiedRead, vary } from '../http/caching.js';
import { once } from '../http/lazy.js';
import { builtFile } from '../built.js';

/**
 * GET /console: the web console, a page and its assets built from console/ by `npm run build`
 * (scripts/build-console.mjs) into dist/console/, served from memory. Everything comes from the service
 * itself (the page's CSP allows nothing else); the assets' names carry a hash of their content, so they are
 * cached for a year and never revalidated, while the page is revalidated on every visit (ETag) and so
 * always names the current assets. GET / leads a browser here, or to /docs with the console off, and
 * tells any other client where the pages are.
 * Public, like /docs: the page holds no data; every API call it makes needs the token signed in with.
 * The console's routes have no schema: they are for browsers, not part of the JSON API (the OpenAPI
 * document leaves them out). GET / is in it, as it answers JSON too.
 */

/** Where the build puts the console: dist/console, beside this module's dist/src. */
const BUILT = builtFile('console/');
/** The page's assets, relative to the page (/console → /console/assets/<file>); as scripts/build-console.mjs links them. */
const ASSET_DIR = 'console/assets';

/** A year: the assets' names change with their content, so a browser never needs to ask again. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * A file held in memory, with its gzip form when that is smaller, and a strong ETag of each: two encodings
 * are two representations (RFC 9110 §8.8.3), so a cache holding one never revalidates it with the other's tag.
 */
interface ServedFile {
  body: Buffer;
  gzipped: Buffer | undefined;
  type: string;
  etag: string;
  gzipEtag: string;
}

function servedFile(url: URL, body: Buffer): ServedFile {
  const extension = /\.[a-z]+$/.exec(url.pathname)?.[0] ?? '';
  const gzipped = gzipSync(body, { level: 9 });
  const digest = createHash('sha256').update(body).digest('base64url');
  return {
    body,
    gzipped: gzipped.length < body.length ? gzipped : undefined,
    type: TYPES[extension] ?? 'application/octet-stream',
    etag: `"${digest}"`,
    gzipEtag: `"${digest}-gzip"`,
  };
}

/**
 * The built console, or undefined when it was not built: its files are read once per process, all of them
 * as the routes are made (about 100 KB), and each is gzipped on its first request. Read as each was first
 * asked for, the files were those on disk then: after a new release was installed in place (its assets under
 * other names, these removed), the assets named by the page this process had served were gone, a 500 each
 * until the reload, and the console broken in the browser that had loaded it.
 */
let listed: { page: () => ServedFile; assets: Map<string, () => ServedFile> } | null | undefined;
function consoleFiles(): { page: () => ServedFile; assets: Map<string, () => ServedFile> } | undefined {
  if (listed === undefined) {
    const index = new URL('index.html', BUILT);
    const assetsDir = new URL('assets/', BUILT);
    listed = existsSync(index)
      ? {
          page: held(index),
          assets: new Map(readdirSync(assetsDir).map((name) => [name, held(new URL(name, assetsDir))])),
        }
      : null;
  }
  return listed ?? undefined;
}

/** A file read now, made ready to serve (gzipped, tagged) on its first request. */
function held(url: URL): () => ServedFile {
  const body = readFileSync(url);
  return once(() => servedFile(url, body));
}

/**
 * RFC 9110 §12.5.3: gzip is acceptable when Accept-Encoding gives it a q above 0; named or not, by `*` only
 * when it is not named itself (the more specific item wins: `gzip;q=0, *` refuses it).
 */
function acceptsGzip(request: FastifyRequest): boolean {
  const header = request.headers['accept-encoding'];
  if (typeof header !== 'string') return false;
  let any: boolean | undefined;
  for (const item of header.split(',')) {
    const [coding = '', ...params] = item.split(';').map((part) => part.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') continue;
    const q = params.find((param) => param.startsWith('q='));
    const acceptable = q === undefined || Number(q.slice(2)) > 0;
    if (coding === 'gzip') return acceptable;
    any ??= acceptable;
  }
  return any === true;
}

function serve(request: FastifyRequest, reply: FastifyReply, file: ServedFile, cacheControl: string): FastifyReply {
  const gzip = file.gzipped !== undefined && acceptsGzip(request);
  const etag = gzip ? file.gzipEtag : file.etag;
  reply.header('cache-control', cacheControl).header('etag', etag);
  if (file.gzipped !== undefined) vary(reply, 'Accept-Encoding');
  if (notModifiedRead(request, etag)) return reply.code(304).send();
  reply.type(file.type);
  if (gzip) return reply.header('content-encoding', 'gzip').send(file.gzipped);
  return reply.send(file.body);
}

const NOT_BUILT = 'the console is not built: run npm run build (it builds console/ into dist/console/)';

/** What GET / tells a client that does not ask for HTML: the service's pages, relative to its root, and its version. */
const ServiceIndex = Type.Object(
  {
    name: Type.Literal('plant-store'),
    version: Type.String({ description: "The service's version", examples: ['1.0.0'] }),
    docs: Type.Literal('/docs', { description: 'The API reference, for a browser' }),
    openapi: Type.Literal('/openapi.json', { description: 'The OpenAPI document of the API' }),
    console: Type.Optional(Type.Literal('/console', { description: 'The web console, for a browser; absent with CONSOLE=off' })),
  },
  { additionalProperties: false },
);

/**
 * Whether the client asks for a page: it names text/html (a browser does), and rates it at least as high as
 * JSON. An Accept of any type alone (curl sends that) is no such request.
 */
function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  const html = quality(accept, 'text/html');
  if (html === 0 || html < quality(accept, 'application/json')) return false;
  return accept.split(',').some((range) => /^text\/(?:html|\*)$/i.test(range.split(';')[0]!.trim()));
}

/** GET /: a browser to the console when it is on, else to the API reference; any other client gets the index. */
export const consoleRoutes: FastifyPluginCallbackTypebox<{ enabled: boolean }> = (app, { enabled }, done) => {
  const index = { name: 'plant-store' as const, version: VERSION, docs: '/docs' as const, openapi: '/openapi.json' as const };
  app.get(
    '/',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'index',
        tags: ['system'],
        summary: "Where the service's pages are, and its version (a browser is sent to the console)",
        response: { 200: ServiceIndex, 302: NoContent },
        responseDescriptions: {
          200: 'The index, for a client that does not ask for HTML (`curl`, a script): `{"name", "version", "docs", "openapi", "console"}`',
          302: 'A browser (an `Accept` that names `text/html`) is sent to the console, or to `/docs` with `CONSOLE=off`',
        },
        responseHeaders: {
          302: {
            Location: {
              description: '`console`, or `docs` with `CONSOLE=off`: relative, so that it holds behind a proxy prefix',
              schema: { type: 'string' },
            },
          },
        },
      },
    },
    async (request, reply) => {
      // The answer depends on Accept: a cache must keep the page's redirect and the index apart.
      vary(reply, 'Accept');
      // Relative, so that it holds behind a proxy that serves the service under a prefix.
      if (wantsHtml(request))
        return reply
          .code(302)
          .header('location', enabled ? 'console' : 'docs')
          .send();
      return reply.send(enabled ? { ...index, console: '/console' as const } : index);
    },
  );
  if (!enabled) return done();

  const files = consoleFiles();
  if (files === undefined) app.log.warn(`CONSOLE is on, but ${NOT_BUILT}`);
  app.get('/console', { config: { auth: 'public' } }, async (request, reply) => {
    if (files === undefined) throw new HttpError('console_not_built', NOT_BUILT);
    reply.header('content-security-policy', PAGE_CSP);
    return serve(request, reply, files.page(), 'no-cache');
  });
  // The page's relative links resolve under /console/ only from /console itself.
  app.get('/console/', { config: { auth: 'public' } }, async (_request, reply) => reply.code(301).header('location', '../console').send());
  // One route per file: any other path under /console is the service's ordinary 404.
  for (const [name, file] of files?.assets ?? []) {
    app.get(`/${ASSET_DIR}/${name}`, { config: { auth: 'public' } }, async (request, reply) => serve(request, reply, file(), IMMUTABLE));
  }
  done();
};
