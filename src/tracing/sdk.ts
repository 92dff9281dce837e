import { hostname } from 'node:os';
import { context, diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config.js';
import type { BatchTracing } from '../store/batcher.js';
import type { DueMessage } from '../store/webhook-store.js';
import type { AttemptOutcome, Sender } from '../webhooks/delivery.js';
import { VERSION } from '../version.js';
import { batchTracing } from './batches.js';
import { warnOfUnreadVariables } from './environment.js';
import { tracedDeliveries } from './deliveries.js';
import { installRequestSpans } from './http.js';
import { samplerFor } from './sampler.js';

/**
 * OpenTelemetry traces, when on (config/tracing.ts tracesUrl): the standard SDK (a tracer provider, a
 * batch span processor, the OTLP/HTTP exporter in protobuf or JSON), the W3C trace-context propagator,
 * and the context manager on AsyncLocalStorage so that a request's store calls know their request.
 * This module and every OpenTelemetry package are loaded only then, by a dynamic import (server.ts):
 * off, nothing of them is loaded and nothing runs. The spans are made by the service itself, where it
 * knows what they mean: http.ts (requests), batches.ts (the store's batches), deliveries.ts (webhooks).
 */

export type TracingSettings = Pick<Config, 'otelExporterOtlpTracesProtocol' | 'otelServiceName' | 'otelTracesSampler' | 'otelTracesSamplerArg'>;

export interface Tracing {
  /** Where spans go: the traces URL without credentials or the query's values (for the start's log line). */
  readonly endpoint: string;
  /** Request spans for an app (buildApp installs them before anything else). */
  installRequestSpans(app: FastifyInstance): void;
  /** The tracers of a store's batches (openStore's `tracing`). */
  readonly batches: BatchTracing;
  /** The sender, each attempt a CLIENT span whose traceparent the request carries. */
  traceDeliveries(sender: Pick<Sender, 'send'>): { send(message: DueMessage): Promise<AttemptOutcome> };
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Exports what is left (waiting at most 5 s, or `timeoutMs` when shorter), then stops. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** The longest part of a collector's answer quoted in a warning (it may be a whole HTML page). */
const QUOTED_ANSWER = 200;

/**
 * The SDK reports a failed export as its error serialized whole, stack included (`{"stack":"OTLPExporterError:
 * Bad Request\n    at …","message":…,"code":"400","data":…}`): one line of the log, read by a person, says what
 * failed instead: `OTLPExporterError: Bad Request (HTTP 400: <the collector's answer>)`.
 */
function readable(message: string): string {
  if (!message.startsWith('{"stack":')) return message;
  let error: Record<string, unknown>;
  try {
    error = JSON.parse(message) as Record<string, unknown>;
  } catch {
    return message;
  }
  if (typeof error.message !== 'string') return message;
  const name = typeof error.name === 'string' ? `${error.name}: ` : '';
  const details = [
    typeof error.code === 'string' || typeof error.code === 'number' ? `HTTP ${error.code}` : undefined,
    typeof error.data === 'string' && error.data !== '' ? error.data.slice(0, QUOTED_ANSWER) : undefined,
  ].filter((part) => part !== undefined);
  return `${name}${error.message}${details.length > 0 ? ` (${details.join(': ')})` : ''}`;
}

/** The SDK's own complaints (an export that failed, a bad OTEL_ variable it reads itself) go to `warn`. */
function diagTo(warn: (message: string) => void): DiagLogger {
  const say = (message: string, ...args: unknown[]) =>
    warn(['tracing:', readable(message), ...args.map((a) => (a instanceof Error ? a.message : String(a)))].join(' '));
  const quiet = () => undefined;
  return { error: say, warn: say, info: quiet, debug: quiet, verbose: quiet };
}

let contextManager: AsyncLocalStorageContextManager | undefined;

/** The process's one context manager, registered the first time tracing starts (every later start shares it). */
function registerContextManager(): void {
  if (contextManager) return;
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
}

/** The URL as the log may show it: without credentials, nor the query's values (a hosted backend's key may be there). */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  for (const name of new Set(parsed.searchParams.keys())) parsed.searchParams.set(name, 'REDACTED');
  return parsed.href;
}

const SHUTDOWN_TIMEOUT_MS = 5000;

/** Starts tracing to `url` (the OTLP/HTTP traces endpoint); `warn` hears of exports that fail. */
export async function startTracing(settings: TracingSettings, url: string, warn: (message: string) => void): Promise<Tracing> {
  diag.setLogger(diagTo(warn), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  warnOfUnreadVariables(warn);
  registerContextManager();
  // One exporter package is loaded, the one the protocol needs. Headers, timeout, compression and
  // certificates come from the standard OTEL_EXPORTER_OTLP_* variables, read by the exporter.
  const { OTLPTraceExporter } =
    settings.otelExporterOtlpTracesProtocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  // service.name: OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES' (the env detector reads both), else ours.
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({
        [ATTR_SERVICE_NAME]: 'plant-store',
        [ATTR_SERVICE_VERSION]: VERSION,
        'host.name': hostname(),
        'process.pid': process.pid,
      }),
    )
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(settings.otelServiceName === '' ? null : resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.otelServiceName }));
  // BasicTracerProvider and BatchSpanProcessor read the span limits and OTEL_BSP_* themselves.
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  const provider = new BasicTracerProvider({
    resource,
    sampler: samplerFor(settings.otelTracesSampler, settings.otelTracesSamplerArg),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('plant-store', VERSION);
  const propagator = new W3CTraceContextPropagator();
  let stopping: Promise<void> | undefined;

  return {
    endpoint: withoutCredentials(url),
    installRequestSpans: (app) => installRequestSpans(app, tracer, propagator),
    batches: batchTracing(tracer),
    traceDeliveries: (sender) => tracedDeliveries(tracer, propagator, sender),
    flush: () => provider.forceFlush(),
    shutdown(within = SHUTDOWN_TIMEOUT_MS) {
      const timeoutMs = Math.min(within, SHUTDOWN_TIMEOUT_MS);
      return (stopping ??= new Promise<void>((resolve) => {
        // A collector that does not answer must not hold the stop: what is not exported by then is dropped.
        const timer = setTimeout(() => {
          warn(`tracing: spans not exported within ${timeoutMs} ms of stopping were dropped`);
          resolve();
        }, timeoutMs);
        timer.unref();
        provider.shutdown().then(
          () => (clearTimeout(timer), resolve()),
          (error: unknown) => {
            clearTimeout(timer);
            warn(`tracing: could not export the last spans: ${error instanceof Error ? error.message : String(error)}`);
            resolve();
          },
        );
      }));
    },
  };
}
