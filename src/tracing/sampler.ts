import { trace, TraceFlags, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-base';
import type { SamplerName } from '../config/tracing.js';

/**
 * The sampler OTEL_TRACES_SAMPLER names (its ratio from OTEL_TRACES_SAMPLER_ARG), with one rule on top: a
 * new trace started with links to recorded spans is recorded. That is a store batch that served several
 * requests (tracing/batches.ts): its span is the root of a trace of its own, linked from every request it
 * served, and must exist whenever one of them was recorded, whatever share of new traces the ratio keeps.
 */
export function samplerFor(name: SamplerName, ratio: number): Sampler {
  return new FollowingLinks(configured(name, ratio));
}

function configured(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

class FollowingLinks implements Sampler {
  constructor(private readonly inner: Sampler) {}

  shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (trace.getSpanContext(context) === undefined && links.some((link) => (link.context.traceFlags & TraceFlags.SAMPLED) !== 0)) {
      return { decision: SamplingDecision.RECORD_AND_SAMPLED };
    }
    return this.inner.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `FollowingLinks{${this.inner.toString()}}`;
  }
}
