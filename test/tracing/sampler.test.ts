import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Link } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import type { SamplerName } from '../../src/config/tracing.js';
import { samplerFor } from '../../src/tracing/sampler.js';

/** OTEL_TRACES_SAMPLER as the specification reads it, and the one rule on top: a root with a recorded link is recorded. */

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const context = (flags: number) =>
  trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: 'b7ad6b7169203331', traceFlags: flags, isRemote: true });
const link = (flags: number): Link => ({ context: { traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: flags } });

function decide(name: SamplerName, ratio: number, parent = ROOT_CONTEXT, links: Link[] = []): SamplingDecision {
  // Only ratios 0 and 1 are used, whose decision does not depend on the trace id.
  return samplerFor(name, ratio).shouldSample(parent, '00000000000000000000000000000001', 'span', SpanKind.SERVER, {}, links).decision;
}

const { RECORD_AND_SAMPLED: SAMPLED, NOT_RECORD } = SamplingDecision;

describe('samplers', () => {
  it('follow the name and the ratio for new traces', () => {
    assert.equal(decide('parentbased_always_on', 1), SAMPLED);
    assert.equal(decide('always_on', 0), SAMPLED);
    assert.equal(decide('always_off', 1), NOT_RECORD);
    assert.equal(decide('parentbased_always_off', 1), NOT_RECORD);
    assert.equal(decide('traceidratio', 0), NOT_RECORD);
    assert.equal(decide('parentbased_traceidratio', 0), NOT_RECORD);
    assert.equal(decide('parentbased_traceidratio', 1), SAMPLED);
  });

  it("follow a caller's decision when parent-based, and ignore it otherwise", () => {
    assert.equal(decide('parentbased_always_on', 1, context(TraceFlags.NONE)), NOT_RECORD);
    assert.equal(decide('parentbased_always_off', 1, context(TraceFlags.SAMPLED)), SAMPLED);
    assert.equal(decide('parentbased_traceidratio', 0, context(TraceFlags.SAMPLED)), SAMPLED);
    assert.equal(decide('always_on', 1, context(TraceFlags.NONE)), SAMPLED);
  });

  it('record a new trace linked to a recorded span (a batch of several requests), whatever the ratio', () => {
    assert.equal(decide('parentbased_traceidratio', 0, ROOT_CONTEXT, [link(TraceFlags.NONE), link(TraceFlags.SAMPLED)]), SAMPLED);
    assert.equal(decide('parentbased_traceidratio', 0, ROOT_CONTEXT, [link(TraceFlags.NONE)]), NOT_RECORD);
    // A span with a parent follows its parent, links or not.
    assert.equal(decide('parentbased_always_on', 1, context(TraceFlags.NONE), [link(TraceFlags.SAMPLED)]), NOT_RECORD);
  });
});
