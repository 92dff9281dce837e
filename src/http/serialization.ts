import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/**
 * Response serializers: Fastify's own (fast-json-stringify), compiled when they first serialize, not when
 * the app is built, and shared by every app of the process. A worker compiled every route's answers at
 * start (about 0.15 s of its CPU to ready) for the few routes most processes serve, and tests, which build
 * hundreds of apps a process, compiled them again for each. The route schemas are module constants, so
 * one schema object is one serializer; only when the app adds shared schemas or serializer options (this
 * one does neither) would a serializer depend on the app, and then it is not shared.
 */
const fastJsonStringify = SerializerSelector();
const shared = new WeakMap<object, (doc: unknown) => string>();

export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = fastJsonStringify(externalSchemas, options);
  const shareable = isEmpty(externalSchemas) && isEmpty(options);
  return (route) => {
    const schema = route.schema;
    const key = shareable && typeof schema === 'object' && schema !== null ? schema : undefined;
    const known = key && shared.get(key);
    if (known) return known;
    let serialize: ((doc: unknown) => string) | undefined;
    const lazy = (doc: unknown) => (serialize ??= compile(route))(doc);
    if (key) shared.set(key, lazy);
    return lazy;
  };
};

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0);
}
