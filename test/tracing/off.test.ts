import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { tracesUrl } from '../../src/config/tracing.js';
import { startTracing } from '../../src/tracing/sdk.js';
import { testApp } from '../helpers.js';
import { tracingTo } from './collector.js';

/**
 * Tracing is off unless an endpoint is set, and off costs nothing: the modules the server loads at start
 * import nothing of OpenTelemetry (the SDK comes by a dynamic import, only when on), an app built without
 * tracing makes no span, and the settings decide exactly when it is on.
 */

const DIST_SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The modules of dist/src that `entry` loads at start: static imports only, followed from file to file. */
function staticallyLoaded(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    // `import … from '…'` and `export … from '…'` (compiled: one per line, type-only imports erased); not `import('…')`.
    for (const match of source.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'([^']+)';|^import\s+'([^']+)';/gms)) {
      const specifier = (match[1] ?? match[2])!;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(join(DIST_SRC, entry));
  return { files, packages };
}

describe('tracing off', () => {
  it('loads nothing of OpenTelemetry: the server, the app and the store import it only dynamically, when on', () => {
    // server.js imports everything dynamically: what the supervisor and a worker load at start is these two's.
    for (const entry of [
      'process/supervisor.js',
      'process/serving.js',
      'app.js',
      'store/open.js',
      'store/sqlite/store.js',
      'store/postgres/store.js',
      'store/sqlite/writer/worker.js',
    ]) {
      const { files, packages } = staticallyLoaded(entry);
      assert.ok(files.size > 1, `${entry}: the walk found its imports (${files.size})`);
      const otel = [...packages].filter((name) => name.startsWith('@opentelemetry/'));
      assert.deepEqual(otel, [], `${entry} loads no OpenTelemetry package at start`);
      const tracing = [...files].filter((file) => file.includes(`${join(DIST_SRC, 'tracing')}/`));
      assert.deepEqual(tracing, [], `${entry} loads no module of src/tracing at start`);
    }
    // And the walk does see them where they are imported statically.
    assert.ok(staticallyLoaded('tracing/sdk.js').packages.has('@opentelemetry/sdk-trace-base'));
    assert.match(readFileSync(join(DIST_SRC, 'process', 'serving.js'), 'utf8'), /await import\('\.\.\/tracing\/sdk\.js'\)/);
  });

  it('loads nothing of OpenTelemetry from the server as it ships either: its bundle leaves it to the chunk tracing imports when on', () => {
    const BUNDLE = fileURLToPath(new URL('../../server/', import.meta.url));
    /** The packages a file of the bundle imports statically, followed through the chunks it imports (esbuild writes "…"). */
    const packagesOf = (start: string): Set<string> => {
      const files = new Set<string>();
      const packages = new Set<string>();
      const visit = (file: string) => {
        if (files.has(file)) return;
        files.add(file);
        for (const match of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s(?:[^;]*?\sfrom\s+)?"([^"]+)";/gms)) {
          if (match[1]!.startsWith('.')) visit(resolve(dirname(file), match[1]!));
          else packages.add(match[1]!);
        }
      };
      visit(join(BUNDLE, start));
      return packages;
    };
    const chunks = readdirSync(BUNDLE);
    // What a process loads at start: the entry, then the supervisor's or a worker's code (dynamic imports, chunks of their own).
    const atStart = chunks.filter((name) => name === 'index.js' || /^(supervisor|serving)-\w+\.js$/.test(name));
    assert.equal(atStart.length, 3, chunks.join(', '));
    for (const start of atStart) {
      const otel = [...packagesOf(start)].filter((name) => name.startsWith('@opentelemetry/'));
      assert.deepEqual(otel, [], `${start} loads no OpenTelemetry package at start`);
    }
    const sdk = chunks.find((name) => /^sdk-\w+\.js$/.test(name));
    assert.ok(sdk !== undefined && packagesOf(sdk).has('@opentelemetry/sdk-trace-base'), 'the walk sees it where tracing imports it');
  });

  it('makes no span and sends nothing for an app built without it, whatever the request carries', async () => {
    // Tracing on elsewhere in the process (its context manager registered), off for this app.
    const { collector, tracing } = await tracingTo(after, { otelTracesSampler: 'always_on' });
    const t = await testApp(after);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    assert.equal((await t.call('POST', '/plants', { body: { id: 1, name: 'a' }, headers: { traceparent } })).statusCode, 200);
    assert.equal((await t.call('GET', '/plants/1', { headers: { traceparent } })).statusCode, 200);
    await tracing.flush();
    assert.deepEqual(collector.exports, [], 'nothing was sent');
    assert.equal(t.app.hasRequestDecorator('traceSpan'), false, 'no request hook or decorator of tracing');
  });

  it('is on only with an endpoint, and OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none turn it off', () => {
    const url = (env: Record<string, string>) => tracesUrl(loadConfig(env));
    assert.equal(url({}), undefined);
    assert.equal(url({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }), undefined, 'settings alone do not turn it on');
    assert.equal(url({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), 'http://collector:4318/v1/traces');
    assert.equal(url({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example/base/' }), 'https://otlp.example/base/v1/traces');
    assert.equal(url({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example/base' }), 'https://otlp.example/base/v1/traces');
    assert.equal(
      url({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example/base?api-key=k3y' }),
      'https://otlp.example/base/v1/traces?api-key=k3y',
      'the path before the query',
    );
    assert.equal(
      url({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9999/custom' }),
      'http://b:9999/custom',
      'the traces endpoint is taken as it is',
    );
    assert.equal(url({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' }), undefined);
    assert.equal(url({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://a:4318/v1/traces', OTEL_TRACES_EXPORTER: 'none' }), undefined);
    assert.equal(url({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'OTLP' }), 'http://a:4318/v1/traces');
  });

  it('names where spans go without credentials or the query’s values (a hosted backend’s key)', async () => {
    const tracing = await startTracing(
      { otelExporterOtlpTracesProtocol: 'http/json', otelServiceName: '', otelTracesSampler: 'always_off', otelTracesSamplerArg: 1 },
      tracesUrl(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:hunter2@otlp.example/base?api-key=k3y&region=eu' }))!,
      () => undefined,
    );
    after(() => tracing.shutdown());
    assert.equal(tracing.endpoint, 'https://otlp.example/base/v1/traces?api-key=REDACTED&region=REDACTED');
  });

  it('reads the protocol and the sampler as the specification spells them, case aside', () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON',
      OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    assert.equal(config.otelExporterOtlpTracesProtocol, 'http/json', 'the traces protocol defaults to the general one');
    assert.equal(config.otelTracesSampler, 'parentbased_traceidratio');
    assert.equal(config.otelTracesSamplerArg, 0.25);
    assert.equal(
      loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).otelExporterOtlpTracesProtocol,
      'http/protobuf',
    );
    const defaults = loadConfig({});
    assert.deepEqual(
      [defaults.otelExporterOtlpTracesProtocol, defaults.otelTracesSampler, defaults.otelTracesSamplerArg, defaults.otelServiceName],
      ['http/protobuf', 'parentbased_always_on', 1, ''],
    );
  });

  it('refuses a bad value at start, naming the setting and never repeating a URL that may hold credentials', () => {
    const refused = (env: Record<string, string>, setting: string, message: RegExp) =>
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && error.setting === setting && message.test(error.message),
        `${JSON.stringify(env)} refused naming ${setting}`,
      );
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', /http:\/\/ or https:\/\//);
    refused(
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://user:hunter2@collector/' },
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      /^(?!.*hunter2).*ftp: URL/,
    );
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url, token=hunter2' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', /^(?!.*hunter2)/);
    refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL', /http\/protobuf/);
    refused({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER', /parentbased_always_on/);
    refused({ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG', /between 0 and 1/);
    refused({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER', /otlp/);
    refused({ OTEL_SDK_DISABLED: 'maybe' }, 'OTEL_SDK_DISABLED', /true or false/);
  });
});
