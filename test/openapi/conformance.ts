import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';
import { SECURITY_HEADERS } from '../../src/http/security.js';
import { operation, resolve, responseOf, type Json } from './walk.js';

/**
 * What a contract tool (Schemathesis and the like) checks of an answer against the OpenAPI document, with
 * the document's own dialect (JSON Schema 2020-12): its status is one the operation declares (an error may
 * fall to `default`), its body is of a media type declared for that status and valid against its schema,
 * every required header is there, and every header it carries is declared for that status and valid. Only
 * the headers every answer carries, whatever the operation (the transport's and the security ones), are
 * not asked to be declared.
 */

/** Sent on every answer, by the transport or the security step: not the operation's to declare. */
const EVERYWHERE = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'x-request-id',
  'vary',
  ...Object.keys(SECURITY_HEADERS),
]);

/**
 * The document with each int64 schema replaced by the string form it names (`x-int64-string`), as
 * `Prefer: int64=string` asks: what an answer with `Preference-Applied: int64=string` is checked against.
 */
function int64AsStrings(node: Json): Json {
  if (Array.isArray(node)) return node.map(int64AsStrings);
  if (node === null || typeof node !== 'object') return node;
  if (node['x-int64-string'] !== undefined) return { description: node.description, ...node['x-int64-string'] };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, int64AsStrings(value)]));
}

export class Conformance {
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  /** What was checked: operation and status, for the sweep to say it covered each operation. */
  readonly seen = new Set<string>();

  constructor(private readonly doc: Json) {
    this.ajv.addSchema(doc, 'openapi.json');
    this.ajv.addSchema(int64AsStrings(doc), 'openapi-int64-strings.json');
  }

  private validator(base: string, pointer: string): ValidateFunction {
    const ref = `${base}#${pointer}`;
    let found = this.validators.get(ref);
    if (found === undefined) {
      found = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, found);
    }
    return found;
  }

  /** The problems of one answer to the operation `key` ("post /plants"); none when it conforms. */
  problems(key: string, res: LightMyRequestResponse): string[] {
    const op = operation(this.doc, key);
    if (op === undefined) return [`${key} is not in the document`];
    const status = String(res.statusCode);
    const declared = op.responses[status] !== undefined ? status : op.responses[`${status[0]}XX`] !== undefined ? `${status[0]}XX` : undefined;
    const problems: string[] = [];
    if (declared === undefined && res.statusCode < 400) return [`${status} is not declared`];
    const name = declared ?? 'default';
    const response = responseOf(this.doc, op, name);
    this.seen.add(`${key} ${name}`);
    // The JSON pointer of the response, its $ref followed.
    const [path, method] = [Object.keys(this.doc.paths).find((p) => this.doc.paths[p][key.split(' ')[0]!] === op)!, key.split(' ')[0]!];
    const at =
      op.responses[name].$ref !== undefined
        ? String(op.responses[name].$ref).slice(1)
        : `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${name}`;

    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (response.content === undefined) {
      if (res.payload !== '') problems.push(`${status} declares no body, got ${type}: ${res.payload.slice(0, 200)}`);
    } else if (response.content[type] === undefined) {
      problems.push(`${status} in ${type || 'no media type'} is not declared (${Object.keys(response.content).join(', ')})`);
    } else if (/[/+]json$/.test(type)) {
      const strings = /\bint64=string\b/.test(String(res.headers['preference-applied'] ?? ''));
      const validate = this.validator(strings ? 'openapi-int64-strings.json' : 'openapi.json', `${at}/content/${type.replace(/\//g, '~1')}/schema`);
      let body: unknown;
      try {
        body = JSON.parse(res.payload);
      } catch {
        problems.push(`${status} ${type}: not JSON: ${res.payload.slice(0, 200)}`);
      }
      if (body !== undefined && !validate(body)) {
        problems.push(`${status} ${type}: ${this.ajv.errorsText(validate.errors)}: ${res.payload.slice(0, 300)}`);
      }
    }

    const headers = (response.headers ?? {}) as Record<string, Json>;
    const names = new Map(Object.keys(headers).map((header) => [header.toLowerCase(), header]));
    for (const [lower, header] of names) {
      const doc = headers[header].$ref === undefined ? headers[header] : (resolve(this.doc, headers[header].$ref) as Json);
      const value = res.headers[lower];
      if (value === undefined) {
        if (doc.required === true) problems.push(`${status}: required header ${header} is missing`);
        continue;
      }
      if (doc.schema?.type === 'integer' && !(Array.isArray(value) ? value : [value]).every((v) => /^\d+$/.test(String(v)))) {
        problems.push(`${status}: header ${header} is not an integer: ${String(value)}`);
      }
    }
    for (const sent of Object.keys(res.headers)) {
      if (!EVERYWHERE.has(sent) && !names.has(sent))
        problems.push(`${status}: header ${sent} is sent but not declared (${String(res.headers[sent])})`);
    }
    return problems;
  }
}
