import { Type } from '@sinclair/typebox';
import { oneOf, type Setting } from './setting.js';

/**
 * OpenTelemetry traces (see docs/metrics-and-tracing.md): the standard SDK variables the service reads itself,
 * checked at start like every other setting. The SDK's other standard variables (OTEL_EXPORTER_OTLP_HEADERS,
 * _TIMEOUT, _COMPRESSION, the certificate files, OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES, the span limits) are
 * read by the SDK itself, and only when tracing is on. Off unless an endpoint is set: then nothing of the SDK
 * is even loaded.
 */

/** The samplers of the specification that the SDK has (jaeger_remote and xray need packages of their own). */
const SAMPLERS = ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** A collector's URL: http or https. Never repeated in the message: it may carry credentials. */
function otlpUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new Error('must be an http:// or https:// URL (such as http://localhost:4318)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`must be an http:// or https:// URL, got a ${url.protocol} URL`);
  return url.href;
}

/** The specification's enumerations are case-insensitive. */
const lower = (text: string) => text.trim().toLowerCase();

export const TRACING_SETTINGS = {
  otelExporterOtlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    schema: Type.String({
      default: '',
      examples: ['http://localhost:4318'],
      description:
        'Send OpenTelemetry traces (OTLP over HTTP) to the collector at this base URL (`http://localhost:4318`: they go to `/v1/traces` under it); unset: no tracing at all (see [Tracing](metrics-and-tracing.md#tracing))',
    }),
    parse: otlpUrl,
    docDefault: 'off',
  },
  otelExporterOtlpTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    schema: Type.String({
      default: '',
      examples: ['http://localhost:4318/v1/traces'],
      description: 'The full URL to send traces to, taken as it is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`',
    }),
    parse: otlpUrl,
    docDefault: 'off',
  },
  otelExporterOtlpProtocol: {
    env: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    schema: oneOf(
      ['http/protobuf', 'http/json'] as const,
      'http/protobuf',
      'How spans are sent: `http/protobuf` or `http/json` (`grpc` is not supported)',
    ),
    parse: lower,
  },
  otelExporterOtlpTracesProtocol: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    schema: oneOf(['http/protobuf', 'http/json'] as const, 'http/protobuf', 'The same for traces alone; wins over `OTEL_EXPORTER_OTLP_PROTOCOL`'),
    parse: lower,
    defaultFrom: (earlier: Readonly<Record<string, unknown>>) => earlier.otelExporterOtlpProtocol,
    docDefault: '`OTEL_EXPORTER_OTLP_PROTOCOL`',
  },
  otelTracesExporter: {
    env: 'OTEL_TRACES_EXPORTER',
    schema: oneOf(['otlp', 'none'] as const, 'otlp', '`none` turns tracing off even with an endpoint set'),
    parse: lower,
  },
  otelSdkDisabled: {
    env: 'OTEL_SDK_DISABLED',
    schema: Type.Boolean({ default: false, description: '`true` turns tracing off even with an endpoint set' }),
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    schema: Type.String({
      default: '',
      description: "The traces' `service.name`; unset: `service.name` from `OTEL_RESOURCE_ATTRIBUTES`, else `plant-store`",
    }),
    docDefault: '`plant-store`',
  },
  otelTracesSampler: {
    env: 'OTEL_TRACES_SAMPLER',
    schema: oneOf(
      SAMPLERS,
      'parentbased_always_on',
      'Which traces are recorded: `parentbased_always_on` (all, and a caller\'s "not sampled" honoured), `parentbased_traceidratio` (a share, set by `OTEL_TRACES_SAMPLER_ARG`), `parentbased_always_off`, `always_on`, `always_off`, `traceidratio`',
    ),
    parse: lower,
  },
  otelTracesSamplerArg: {
    env: 'OTEL_TRACES_SAMPLER_ARG',
    schema: Type.Number({
      minimum: 0,
      maximum: 1,
      default: 1,
      description: 'The share of new traces the `traceidratio` samplers record, from 0 to 1 (`0.1`: one in ten); other samplers ignore it',
    }),
  },
} satisfies Record<string, Setting>;

/** Where traces go (the OTLP/HTTP traces URL), or undefined when tracing is off: no endpoint, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none. */
export function tracesUrl(
  config: Readonly<Record<'otelExporterOtlpEndpoint' | 'otelExporterOtlpTracesEndpoint', string>> & {
    otelSdkDisabled: boolean;
    otelTracesExporter: 'otlp' | 'none';
  },
): string | undefined {
  if (config.otelSdkDisabled || config.otelTracesExporter === 'none') return undefined;
  if (config.otelExporterOtlpTracesEndpoint !== '') return config.otelExporterOtlpTracesEndpoint;
  const base = config.otelExporterOtlpEndpoint;
  if (base === '') return undefined;
  // The specification's rule: the signal's path is appended to the base URL, after its own path (and so
  // before a query string, which a hosted backend may ask for: `?api-key=…`).
  const url = new URL(base);
  url.pathname = `${url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`}v1/traces`;
  return url.href;
}
