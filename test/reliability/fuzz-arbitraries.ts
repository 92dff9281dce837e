import fc from 'fast-check';

/**
 * Generators of hostile requests for the fuzz test: every part of a request (method, path, query,
 * headers, body) drawn from values near the edges the service must handle, plus plain randomness.
 * Bodies are built as text (or bytes), never through JSON.stringify alone, so that numbers beyond
 * 2^53 and int64, duplicate keys and broken UTF-8 reach the server exactly as written.
 */

/** Integers spelled at and beyond the int64 and double edges, and numbers that are not integers. */
const NUMBER_EDGES = [
  '0',
  '-0',
  '1',
  '-1',
  '7',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '123456789012345678901234567890',
  '1e3',
  '1E400',
  '1.0',
  '1.5',
  '-1.5e300',
  '0.0000001',
  '00',
  '01',
  '-',
  '1_000',
  '0x10',
  'NaN',
  'Infinity',
];

/** ids mostly from a small pool, so that operations meet the same plants again. */
export const idText: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 40 }).map(String) },
  { weight: 3, arbitrary: fc.constantFrom(...NUMBER_EDGES) },
  { weight: 2, arbitrary: fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String) },
  { weight: 1, arbitrary: fc.double().map((d) => (Number.isFinite(d) ? String(d) : '1e999')) },
);

const printable = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });

/** JSON string literals: ordinary, unicode, escapes, lone surrogates, NUL, and too long. */
const stringLiteral: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map((s) => JSON.stringify(s)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom('""', '"\\ud800"', '"\\udc00x"', '"a\\u0000b"', '"\\uZZZZ"', '"tab\there"', '"\\/"') },
  { weight: 1, arbitrary: fc.integer({ min: 255, max: 2000 }).map((n) => JSON.stringify('n'.repeat(n))) },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 70 }).map((n) => JSON.stringify('🌱'.repeat(n))) },
);

/** Any JSON value as text, valid or not quite. */
const valueText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: stringLiteral },
  { weight: 3, arbitrary: idText },
  { weight: 1, arbitrary: fc.constantFrom('null', 'true', 'false', '[]', '{}', '[1]', '{"a":1}', 'undefined', "'x'") },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
);

const KEYS = ['id', 'name', 'tag', '__proto__', 'constructor', 'prototype', 'toString', 'ID', ''];

/** An object whose fields are mostly the plant's, each with any value, keys possibly repeated. */
const objectText: fc.Arbitrary<string> = fc
  .array(fc.tuple(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: printable(8) }), valueText), {
    maxLength: 6,
  })
  .map((fields) => `{${fields.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`);

/** A body a client meant to be right: what most cases send, so that they reach the store. */
const plausiblePlant: fc.Arbitrary<string> = fc
  .record(
    {
      id: idText,
      name: fc.oneof(
        { weight: 10, arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map((s) => JSON.stringify(s)) },
        { weight: 2, arbitrary: valueText },
        {
          weight: 1,
          arbitrary: fc.constantFrom('"\\ud800"', '"a\\udfff"', '"\\ud83c\\udf31"', '"\\uDBFF\\uDFFF"', '"\\udc00\\ud800"', '"x\\u0000"'),
        },
      ),
      tag: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('"herb"', '"tree"', '"fern"') },
        { weight: 1, arbitrary: fc.constantFrom('null', '""') },
        { weight: 1, arbitrary: valueText },
      ),
    },
    { requiredKeys: ['name'] },
  )
  .map(
    (plant) =>
      `{${Object.entries(plant)
        .map(([key, value]) => `"${key}":${value}`)
        .join(',')}}`,
  );

/** Bodies that stress the parser: deep nesting, huge arrays and strings, truncation, broken UTF-8. */
const hostileBody: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.integer({ min: 1, max: 40_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 1, max: 6_000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
  fc.integer({ min: 1, max: 20_000 }).map((n) => `{"id":1,"name":"x","tag":[${'1,'.repeat(n)}1]}`),
  fc.integer({ min: 60_000, max: 70_000 }).map((n) => `{"id":2,"name":"${'x'.repeat(n)}"}`),
  fc.integer({ min: 1, max: 30 }).map((n) => `{"id":${'9'.repeat(n * 10)},"name":"x"}`),
  plausiblePlant.chain((text) => fc.integer({ min: 0, max: text.length }).map((cut) => text.slice(0, cut))),
  plausiblePlant.chain((text) =>
    fc
      .tuple(fc.integer({ min: 0, max: text.length }), fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]))
      .map(([at, bytes]) => Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))])),
  ),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom('', ' ', '\ufeff{"id":1,"name":"bom"}', '{"id":1,"name":"x"} trailing', '{"id":1,"name":"x"}{"id":2}', '\u0000'),
  printable(200),
);

export const bodyArb: fc.Arbitrary<string | Buffer | undefined> = fc.oneof(
  { weight: 12, arbitrary: plausiblePlant },
  { weight: 3, arbitrary: objectText },
  { weight: 3, arbitrary: hostileBody },
  { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 2, arbitrary: fc.constant(undefined) },
);

/** A path id: the pool, the edges, and spellings a router or a decoder might trip on. */
const pathId: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: idText.map((text) => encodeURIComponent(text)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '%31',
      '%2D1',
      '+1',
      '%2B1',
      '1%00',
      '%zz',
      '%',
      '%E0%A4%A',
      '%C0%AF',
      '..',
      '.',
      '1;x',
      '1%2F2',
      ' 1',
      '%201',
      '1.',
      '1e2',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 150, max: 260 }).map((n) => '9'.repeat(n)) },
  { weight: 1, arbitrary: printable(30).map((s) => encodeURIComponent(s)) },
);

export const pathArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: pathId.map((id) => `/plants/${id}`) },
  { weight: 4, arbitrary: fc.constant('/plants') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/plants/',
      '/plants//1',
      '/plants/1/x',
      '/PLANTS',
      '/healthz',
      '/readyz',
      '/openapi.json',
      '/',
      '//',
      '/plants/__proto__',
      '/plants/constructor',
      '/%',
      '/plants%2F1',
    ),
  },
  { weight: 1, arbitrary: printable(40).map((s) => `/${encodeURI(s)}`) },
);

const QUERY_KEYS = ['limit', 'after', 'tag', '__proto__', 'constructor', 'limit[]', 'a', 'tag[0]'];
const queryValue: fc.Arbitrary<string> = fc.oneof(
  idText.map((s) => encodeURIComponent(s)),
  fc.constantFrom('', '%zz', '%', 'herb', 'fern', '%00', '1%20', '+1', 'true', 'null', '[]', '1000', '1001', '0', '-1'),
  printable(20).map((s) => encodeURIComponent(s)),
);

export const queryArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  {
    weight: 6,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom(...QUERY_KEYS), queryValue), { minLength: 1, maxLength: 5 })
      .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('?', '?&&&', '?limit', '?=1', '?limit=1&limit=2', `?tag=${'t'.repeat(5000)}`, `?${'a=1&'.repeat(2000)}`) },
);

export const methodArb: fc.Arbitrary<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS'> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') },
  { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS') },
);

export const contentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constant('application/merge-patch+json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      ' application/json',
      'application/json;',
      'application/jsonx',
      'application/json, text/plain',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      '*/*',
      'application/*',
      'application/problem+json',
      'json',
    ),
  },
  { weight: 1, arbitrary: printable(30) },
);

export const ifNoneMatchArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom('*', ' * ', '"x"', '*, *', '', 'W/"1"') },
);

/** Which credentials the case sends: mostly the full token, so that the case reaches validation. */
export type FuzzAuth = 'full' | 'read' | 'write' | 'none' | { header: string };
export const authArb: fc.Arbitrary<FuzzAuth> = fc.oneof(
  { weight: 10, arbitrary: fc.constant('full' as const) },
  { weight: 1, arbitrary: fc.constantFrom('read' as const, 'write' as const, 'none' as const) },
  { weight: 1, arbitrary: printable(60).map((s) => ({ header: s })) },
);

/** The operations as documented, so that most cases hit a route with the method it answers. */
const operationArb = fc.oneof(
  fc.constant({ method: 'POST' as const, path: '/plants' }),
  fc.constant({ method: 'GET' as const, path: '/plants' }),
  ...(['GET', 'PUT', 'PATCH', 'DELETE'] as const).map((method) => pathId.map((id) => ({ method, path: `/plants/${id}` }))),
);

export const requestArb = fc
  .record({
    operation: fc.oneof({ weight: 4, arbitrary: operationArb }, { weight: 1, arbitrary: fc.record({ method: methodArb, path: pathArb }) }),
    query: queryArb,
    body: bodyArb,
    contentType: contentTypeArb,
    ifNoneMatch: ifNoneMatchArb,
    auth: authArb,
  })
  .map(({ operation, ...rest }) => ({ ...operation, ...rest }));
export type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;
