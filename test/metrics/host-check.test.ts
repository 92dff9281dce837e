import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, it } from 'node:test';
import { listenForScrapes, type MetricsListener } from '../../src/metrics/server.js';
import { connect } from 'node:net';

/**
 * The metrics listener answers only requests that name it in their Host header: an IP address (a page can
 * only send one when its own origin is that address), localhost, METRICS_HOST, or a name listed in
 * METRICS_ALLOWED_HOSTS. A browser page of another site that rebinds its own name to the listener's address
 * (DNS rebinding) sends its own name, and is refused.
 */

const scrape = async () => ({ contentType: 'text/plain; version=0.0.4', body: 'up 1\n' });

async function listen(host: string, allowedHosts: string[]): Promise<MetricsListener> {
  const listener = await listenForScrapes({ host, port: 0, allowedHosts }, scrape, (error) => assert.fail(String(error)));
  after(() => listener.close());
  return listener;
}

/** GET /metrics with this Host header; the status and body. */
function get(listener: MetricsListener, host: string): Promise<{ status: number; body: string }> {
  const url = new URL(listener.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/metrics', headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the metrics listener checks the Host header (DNS rebinding)', () => {
  it('by default: IP addresses, localhost and METRICS_HOST, with any port; any other name is 421', async () => {
    const listener = await listen('127.0.0.1', []);
    const port = new URL(listener.url).port;
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', `localhost:${port}`, 'LocalHost', `[::1]:${port}`, '10.0.0.5:9464', '[2001:db8::1]']) {
      const { status, body } = await get(listener, host);
      assert.equal(status, 200, `${host}: ${body}`);
      assert.equal(body, 'up 1\n');
    }
    for (const host of [
      `attacker.example:${port}`,
      'attacker.example',
      'localhost.attacker.example',
      '127.0.0.1.nip.io',
      'metrics.internal',
      'a:b:c',
      '[::1',
    ]) {
      const { status, body } = await get(listener, host);
      assert.equal(status, 421, host);
      const error = JSON.parse(body) as { error: number; message: string };
      assert.equal(error.error, 421);
      assert.match(error.message, /^the Host header names ".*", which this metrics listener does not answer to \(METRICS_ALLOWED_HOSTS\)$/);
      assert.ok(!body.includes('up 1'), 'no metric in a refusal');
    }
  });

  it('METRICS_ALLOWED_HOSTS adds names (any case); METRICS_HOST is one when it is a name', async () => {
    const listener = await listen('localhost', ['metrics.internal', 'prom-target.example']);
    for (const host of ['metrics.internal:9464', 'METRICS.internal', 'prom-target.example', 'localhost', '127.0.0.1']) {
      assert.equal((await get(listener, host)).status, 200, host);
    }
    assert.equal((await get(listener, 'other.internal')).status, 421);
  });

  it('* answers any Host', async () => {
    const listener = await listen('127.0.0.1', ['*']);
    assert.equal((await get(listener, 'anything.example:1234')).status, 200);
  });

  it('an HTTP/1.0 request without Host is answered (nothing to rebind); HTTP/1.1 without one is 400', async () => {
    const listener = await listen('127.0.0.1', []);
    const port = Number(new URL(listener.url).port);
    /** What the listener sends back for these raw bytes, until it closes the connection. */
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        let received = '';
        const socket = connect(port, '127.0.0.1', () => socket.end(text));
        socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
        socket.on('close', () => resolve(received)).on('error', reject);
      });
    const old = await raw('GET /metrics HTTP/1.0\r\n\r\n');
    assert.match(old, /^HTTP\/1\.1 200 /);
    assert.ok(old.endsWith('up 1\n'), old);
    assert.match(await raw('GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400 /);
  });
});
