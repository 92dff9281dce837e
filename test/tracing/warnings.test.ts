import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, it } from 'node:test';
import type { DueMessage } from '../../src/store/webhook-store.js';
import { warnOfUnreadVariables } from '../../src/tracing/environment.js';
import { startTracing } from '../../src/tracing/sdk.js';
import type { AttemptOutcome } from '../../src/webhooks/delivery.js';
import { until } from '../toolkit.js';

/**
 * What the SDK complains of reaches the log as one readable warning: an export the collector refused says
 * so, with its status and answer, not as the SDK's error serialized whole (its stack, as JSON).
 */

it('a refused export is one readable warning: the error, the status and the collector’s answer', async () => {
  const collector = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(400).end('unknown tenant'));
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => collector.close(() => resolve())));
  const { port } = collector.address() as { port: number };
  const warnings: string[] = [];
  // The batch processor reads its delay from the environment when made: an export every 50 ms.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  const tracing = await startTracing(
    { otelExporterOtlpTracesProtocol: 'http/json', otelServiceName: '', otelTracesSampler: 'always_on', otelTracesSamplerArg: 1 },
    `http://127.0.0.1:${port}/v1/traces`,
    (message) => warnings.push(message),
  );
  delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  after(() => tracing.shutdown(1000));
  // A span of the service's own (a webhook delivery's), for the export to carry.
  const sender = { send: () => Promise.resolve<AttemptOutcome>({ status: 204, error: null }) };
  const message: DueMessage = {
    seq: '1',
    endpointId: 'ep_1',
    url: 'https://receiver.example/hook',
    secrets: [],
    eventId: 'msg_1',
    payload: '{}',
    roundAttempts: 0,
  };
  await tracing.traceDeliveries(sender).send(message);
  await until(() => warnings.length > 0, 'a warning');
  assert.equal(warnings[0], 'tracing: OTLPExporterError: Bad Request (HTTP 400: unknown tenant)');
});

it('an OTEL_EXPORTER_OTLP_HEADERS entry the exporter cannot read is said at start, by its place, never its text', async () => {
  const warnings: string[] = [];
  process.env.OTEL_EXPORTER_OTLP_HEADERS = 'api-key=k3y,Authorization: Bearer s3cret';
  const tracing = await startTracing(
    { otelExporterOtlpTracesProtocol: 'http/json', otelServiceName: '', otelTracesSampler: 'always_off', otelTracesSamplerArg: 1 },
    'http://127.0.0.1:9/v1/traces',
    (message) => warnings.push(message),
  );
  delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
  after(() => tracing.shutdown(1000));
  assert.deepEqual(warnings, ['tracing: OTEL_EXPORTER_OTLP_HEADERS: entry 2 of 2 is not a header as name=value (percent-encoded), and is not sent']);
});

it('an OTEL_RESOURCE_ATTRIBUTES the SDK drops whole is said at start; one it reads is not', () => {
  const said = (value: string) => {
    const warnings: string[] = [];
    warnOfUnreadVariables((message) => warnings.push(message), { OTEL_RESOURCE_ATTRIBUTES: value });
    return warnings;
  };
  const dropped =
    'tracing: OTEL_RESOURCE_ATTRIBUTES: entry 2 of 2 is not an attribute as name=value (percent-encoded, 255 characters at most), so none of them is kept';
  assert.deepEqual(said('deployment.environment.name=prod,k8s.pod.name=a=b'), [dropped]);
  assert.deepEqual(said('deployment.environment.name=prod,region eu'), [dropped]);
  assert.deepEqual(said('deployment.environment.name=prod,team=%zz'), [dropped]);
  assert.deepEqual(said(`deployment.environment.name=prod,note=${'x'.repeat(256)}`), [dropped]);
  assert.deepEqual(said('deployment.environment.name=prod, team=plants%2Cgarden ,'), []);
  assert.deepEqual(said(''), []);
});
