import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';

/**
 * GET /: a browser that opens the service's address is led to the page that explains it, not to a bare 404.
 * For now that is the API reference (/docs); the one place to change when a page for people (a console)
 * comes. 302, temporary, since it will change; relative (`docs`), so that it holds behind a proxy that
 * serves the service under a prefix. Public, and no operation of the API (no schema: not in the document).
 */
const HOME = 'docs';

export const homeRoute: FastifyPluginCallbackTypebox = (app, _options, done) => {
  app.get('/', { config: { auth: 'public' } }, async (_request, reply) => reply.code(302).header('location', HOME).send());
  done();
};
