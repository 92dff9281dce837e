import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { after } from 'node:test';
import { startTracing, type Tracing, type TracingSettings } from '../../src/tracing/sdk.js';
import { decodeTraces } from './otlp-proto.js';
import { until } from '../toolkit.js';

/**
 * An OTLP/HTTP collector on loopback, as the tests' stand-in for an OpenTelemetry Collector: it takes
 * POST /v1/traces in either encoding the exporter speaks (application/json, application/x-protobuf,
 * decoded by otlp-proto.ts), answers 200, and keeps every span in one plain shape.
 */

export type Value = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, Value>;
  links: Array<{ traceId: string; spanId: string }>;
  events: string[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, Value>;
}

export const SERVER = 2;
export const CLIENT = 3;
export const ERROR = 2;

/** OTLP/JSON as the exporter writes it (ids in hex, enums as numbers). */
interface JsonValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonValue;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  links?: Array<{ traceId: string; spanId: string }>;
  events?: Array<{ name: string }>;
  status?: { code?: number; message?: string };
}
interface JsonRequest {
  resourceSpans: Array<{ resource?: { attributes?: JsonKeyValue[] }; scopeSpans: Array<{ spans: JsonSpan[] }> }>;
}

function jsonValue(value: JsonValue): Value {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  throw new Error(`an attribute value of a kind the service does not make: ${JSON.stringify(value)}`);
}

const attributesOf = (list: JsonKeyValue[] = []): Record<string, Value> => Object.fromEntries(list.map((kv) => [kv.key, jsonValue(kv.value)]));

function fromJson(body: string): ReceivedSpan[] {
  const request = JSON.parse(body) as JsonRequest;
  return request.resourceSpans.flatMap(({ resource, scopeSpans }) =>
    scopeSpans.flatMap(({ spans }) =>
      spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
        events: (span.events ?? []).map((event) => event.name),
        status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
        resource: attributesOf(resource?.attributes),
      })),
    ),
  );
}

export interface Export {
  contentType: string;
  headers: IncomingHttpHeaders;
  spans: ReceivedSpan[];
}

export class Collector {
  readonly exports: Export[] = [];
  /** Takes requests but never answers them (a collector that hangs). */
  hang = false;
  private readonly server: Server = createServer((request, response) => {
    if (this.hang) return;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = String(request.headers['content-type']);
      try {
        assert.equal(request.method, 'POST');
        assert.equal(request.url, '/v1/traces');
        const spans = contentType.startsWith('application/json') ? fromJson(body.toString('utf8')) : decodeTraces(body);
        this.exports.push({ contentType, headers: request.headers, spans });
        response.writeHead(200, { 'content-type': contentType }).end(contentType.startsWith('application/json') ? '{}' : '');
      } catch (error) {
        this.failures.push(error);
        response.writeHead(400).end();
      }
    });
  });
  /** Requests it could not take (a test fails on any). */
  readonly failures: unknown[] = [];

  static async start(cleanup: typeof after): Promise<Collector> {
    const collector = new Collector();
    await new Promise<void>((resolve) => collector.server.listen(0, '127.0.0.1', resolve));
    cleanup(() => {
      collector.server.closeAllConnections();
      return new Promise<void>((resolve) => collector.server.close(() => resolve()));
    });
    return collector;
  }

  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  get endpoint(): string {
    const { port } = this.server.address() as { port: number };
    return `http://127.0.0.1:${port}`;
  }

  get spans(): ReceivedSpan[] {
    assert.deepEqual(this.failures, [], 'the collector took every export');
    return this.exports.flatMap((e) => e.spans);
  }

  /** Waits until spans matching `match` have arrived (`count` of them at least), or fails after `timeoutMs`. */
  async waitFor(match: (span: ReceivedSpan) => boolean, count = 1, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
    return until(
      () => {
        const found = this.spans.filter(match);
        return found.length >= count && found;
      },
      `${count} matching spans`,
      { timeoutMs },
    ).catch((error: Error) => {
      const found = this.spans.filter(match);
      throw new Error(`${error.message}: got ${found.length} of ${this.spans.map((s) => s.name).join(', ') || 'none'}`);
    });
  }
}

/**
 * A collector, and tracing to it in OTLP/JSON (the process test takes the default, protobuf). Call it at
 * a file's top level: an after() registered inside a before() hook runs as soon as that hook ends. The
 * last spans are exported before the collector stops (after hooks run in the order registered).
 */
export async function tracingTo(
  cleanup: typeof after,
  settings: Partial<TracingSettings> = {},
  warn: (message: string) => void = () => undefined,
): Promise<{ collector: Collector; tracing: Tracing }> {
  const started: { tracing?: Tracing } = {};
  cleanup(() => started.tracing?.shutdown());
  const collector = await Collector.start(cleanup);
  started.tracing = await startTracing(
    {
      otelExporterOtlpTracesProtocol: 'http/json',
      otelServiceName: '',
      otelTracesSampler: 'parentbased_always_on',
      otelTracesSamplerArg: 1,
      ...settings,
    },
    `${collector.endpoint}/v1/traces`,
    warn,
  );
  return { collector, tracing: started.tracing };
}
