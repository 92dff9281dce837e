import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_DB_OPERATION_BATCH_SIZE, ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { BatchTracer, BatchTracing, Traced } from '../store/batcher.js';

/**
 * Spans of the store's batches (store/batcher.ts: the SQLite writer thread's group commit, SQLite's reads
 * of one turn, PostgreSQL's group commit and its reads by id). A batch gets a span when a request being
 * recorded waited on it:
 * - it served one such request: the span is that request's child (the common case under light load);
 * - it served several: the span starts a trace of its own, linked to each request's span, and each
 *   request's span links to it (the request's trace shows which batch it waited on, the batch's which
 *   requests it served). Links past the SDK's limit per span (OTEL_SPAN_LINK_COUNT_LIMIT, 128) are dropped
 *   from the batch's span; `plant_store.batch.requests` still counts them all.
 * A batch that no recorded request waited on (the webhook dispatcher's own work, say) gets none. Every
 * batch runs outside its callers' context, so that what it sets off (waking the dispatcher) is nobody's.
 */

/** The spans' extra attribute: how many recorded requests waited on the batch. */
const REQUESTS = 'plant_store.batch.requests';

/** A span context as a W3C traceparent (version 00). */
function traceparentOf({ traceId, spanId, traceFlags }: SpanContext): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

export function batchTracing(tracer: Tracer): BatchTracing {
  return ({ system, operation }): BatchTracer => {
    const name = `${system} ${operation}`;
    return {
      caller: () => trace.getSpan(context.active()),
      traceparent: (caller) => traceparentOf((caller as Span).spanContext()),
      run: (items, run) => {
        const span = startBatchSpan(tracer, name, system, items);
        const ran = context.with(ROOT_CONTEXT, run);
        if (span === undefined) return ran;
        return ran.then((error) => {
          if (error !== undefined) {
            // The stores fail batches with Errors (StoreUnavailableError, a driver's error).
            const failure = error instanceof Error ? error : new Error('the batch failed');
            span.setAttribute(ATTR_ERROR_TYPE, failure.name);
            span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
          }
          span.end();
          return error;
        });
      },
    };
  };
}

function startBatchSpan(tracer: Tracer, name: string, system: string, items: readonly Traced[]): Span | undefined {
  // The distinct requests being recorded (a request may have more than one item in a batch).
  const callers = new Set<Span>();
  for (const item of items) {
    const caller = item.caller as Span | undefined;
    if (caller !== undefined && caller.isRecording()) callers.add(caller);
  }
  if (callers.size === 0) return undefined;
  const attributes: Attributes = { [ATTR_DB_SYSTEM_NAME]: system, [REQUESTS]: callers.size };
  // The conventions count a batch from two operations up.
  if (items.length > 1) attributes[ATTR_DB_OPERATION_BATCH_SIZE] = items.length;
  if (callers.size === 1) {
    const [only] = callers;
    return tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, trace.setSpan(ROOT_CONTEXT, only!));
  }
  const links = [...callers].map((caller) => ({ context: caller.spanContext() }));
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes, links, root: true }, ROOT_CONTEXT);
  const link = { context: span.spanContext() };
  for (const caller of callers) caller.addLink(link);
  return span;
}
