import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validatorCompiler } from '../src/http/validation.js';
import { Writes } from '../src/http/writes.js';
import { buildOpenApi } from '../src/openapi/document.js';
import { plantImportRoute } from '../src/plants/import-route.js';
import { plantListRoute } from '../src/plants/list-route.js';
import { plantRoutes } from '../src/plants/routes.js';
import { namedSchemas } from '../src/plants/schema.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { systemRoutes } from '../src/system/routes.js';
import { webhookDeliveryRoutes } from '../src/webhooks/delivery-routes.js';
import { SIGNING, WEBHOOK_EVENTS, webhookSchemas } from '../src/webhooks/events-doc.js';
import { webhookRoutes } from '../src/webhooks/routes.js';

/** The OpenAPI piece of `npm run bench:plugins`: the service's document generator against @fastify/swagger, on the same routes. */

/** CPU ms of `work`. */
async function cpuMs(work: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/**
 * The service's own route modules in a bare app (no hooks), its OpenAPI document made either by ours
 * (src/openapi/document.ts, from the routes collected as they register) or by @fastify/swagger: the same routes,
 * the same schemas, so the two differ by the generator only.
 */
async function documentedApp(store: Store, generator: 'ours' | '@fastify/swagger'): Promise<{ app: FastifyInstance; document: () => object }> {
  const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('principal', null);
  const routes: RouteOptions[] = [];
  if (generator === 'ours') app.addHook('onRoute', (route) => void routes.push(route));
  else await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'Plant Store', version: '1.0.0' } } });
  const writes = new Writes(store, 86_400_000);
  await app.register(plantRoutes, { plants: store.plants, writes });
  await app.register(plantListRoute, { plants: store.plants });
  await app.register(plantImportRoute, {
    plants: store.plants,
    writes,
    bodyLimit: 2 ** 30,
    maxRowBytes: 65536,
    timeoutMs: 600_000,
    deadlines: { extend: () => undefined } as never,
    unknownFields: 'lenient',
  });
  await app.register(webhookRoutes, { webhooks: store.webhooks, writes, allowPrivateNetworks: false });
  await app.register(webhookDeliveryRoutes, { webhooks: store.webhooks, writes });
  await app.register(systemRoutes, { store, openApi: () => ({}) });
  await app.ready();
  const documented = { schemas: [...namedSchemas, ...webhookSchemas], webhooks: WEBHOOK_EVENTS, signing: SIGNING, bodyLimit: 1024 * 1024 };
  return { app, document: () => (generator === 'ours' ? buildOpenApi(routes, documented) : app.swagger()) };
}

/** What a document says, for the comparison of features: operations, how their answers are described, what else it has. */
function facts(document: object): string {
  const doc = document as {
    paths?: Record<
      string,
      Record<string, { responses?: Record<string, { description?: string; headers?: object }>; security?: unknown; tags?: unknown }>
    >;
    webhooks?: object;
    components?: { schemas?: object; securitySchemes?: object };
  };
  const operations = Object.values(doc.paths ?? {}).flatMap((path) => Object.values(path));
  const responses = operations.flatMap((operation) => Object.values(operation.responses ?? {}));
  return [
    `${operations.length} operations`,
    `${responses.length} answers, ${responses.filter((r) => r.description === 'Default Response').length} described only as "Default Response", ${responses.filter((r) => r.headers).length} with headers`,
    `${operations.filter((o) => o.security).length} with their security`,
    `${Object.keys(doc.components?.schemas ?? {}).length} named schemas`,
    `security schemes: ${doc.components?.securitySchemes ? 'yes' : 'no'}`,
    `webhooks: ${Object.keys(doc.webhooks ?? {}).length}`,
  ].join('; ');
}

export async function openApiRows(rounds: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-plugins-'));
  const store = SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'FULL', busyTimeoutMs: 5000 });
  const generators = ['ours', '@fastify/swagger'] as const;
  const ready: Record<string, number[]> = { ours: [], '@fastify/swagger': [] };
  const made: Record<string, number[]> = { ours: [], '@fastify/swagger': [] };
  const described: Record<string, string> = {};
  try {
    for (let round = 0; round < rounds; round++) {
      for (const generator of round % 2 === 0 ? generators : [...generators].reverse()) {
        let built: Awaited<ReturnType<typeof documentedApp>> | undefined;
        ready[generator]!.push(await cpuMs(async () => (built = await documentedApp(store, generator))));
        let text = '';
        made[generator]!.push(await cpuMs(() => (text = JSON.stringify(built!.document()))));
        described[generator] = `${text.length} bytes; ${facts(JSON.parse(text) as object)}`;
        await built!.app.close();
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return generators.map(
    (name) =>
      `| OpenAPI | routes registered and ready / the document made (CPU ms) | ${name} | ${median(ready[name]!).toFixed(1)} / ${median(made[name]!).toFixed(1)} | ${described[name]} |`,
  );
}
