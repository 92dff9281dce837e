import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Tracer,
} from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { DueMessage } from '../store/webhook-store.js';
import type { AttemptOutcome } from '../webhooks/delivery.js';

/**
 * A CLIENT span per webhook delivery attempt, the child of the request whose write queued the message
 * (its traceparent is kept with the message in the outbox), or a trace of its own when there was none
 * (tracing was off then, a bulk import). The request carries this span's `traceparent` (only the
 * traceparent is kept with a message, not the caller's tracestate), so a receiver that traces joins the trace. The URL is recorded without anything that may be
 * a secret: webhook URLs often carry one in the path or the query (`/services/T0/B0/XXXX`, `?token=`), so
 * only the scheme, host and port are kept and the rest reads REDACTED.
 */

const DELIVERY_SPAN = 'webhook delivery';
const ATTEMPT = 'plant_store.webhook.attempt';
const WEBHOOK_ID = 'plant_store.webhook.id';
const ENDPOINT = 'plant_store.webhook.endpoint';

interface Deliverer {
  send(message: DueMessage, traceHeaders?: Readonly<Record<string, string>>): Promise<AttemptOutcome>;
}

/** The URL as recorded: scheme, host and port, the path and query replaced. */
function redactedUrl(url: URL): string {
  const path = url.pathname === '/' ? '/' : '/REDACTED';
  return `${url.protocol}//${url.host}${path}${url.search === '' ? '' : '?REDACTED'}`;
}

function defaultPort(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

export function tracedDeliveries(
  tracer: Tracer,
  propagator: W3CTraceContextPropagator,
  sender: Deliverer,
): { send(message: DueMessage): Promise<AttemptOutcome> } {
  return {
    async send(message) {
      const parent =
        message.traceparent === undefined
          ? ROOT_CONTEXT
          : propagator.extract(ROOT_CONTEXT, { traceparent: message.traceparent }, defaultTextMapGetter);
      const url = new URL(message.url);
      const attributes: Attributes = {
        [ATTR_HTTP_REQUEST_METHOD]: 'POST',
        [ATTR_URL_FULL]: redactedUrl(url),
        [ATTR_URL_SCHEME]: url.protocol.slice(0, -1),
        [ATTR_SERVER_ADDRESS]: url.hostname,
        [ATTR_SERVER_PORT]: defaultPort(url),
        [ATTEMPT]: message.roundAttempts + 1,
        [WEBHOOK_ID]: message.eventId,
        [ENDPOINT]: message.endpointId,
      };
      if (message.roundAttempts > 0) attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] = message.roundAttempts;
      const span = tracer.startSpan(DELIVERY_SPAN, { kind: SpanKind.CLIENT, attributes }, parent);
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(parent, span), headers, defaultTextMapSetter);
      const outcome = await sender.send(message, headers);
      if (outcome.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
      if (outcome.error !== null) {
        // No answer (a timeout, a refused connection, a forbidden address): the conventions' _OTHER.
        span.setAttribute(ATTR_ERROR_TYPE, outcome.status === null ? '_OTHER' : String(outcome.status));
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
      }
      span.end();
      return outcome;
    },
  };
}
