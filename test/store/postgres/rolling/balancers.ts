import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '../../../helpers.js';
import { freePort } from '../pg-server.js';

/**
 * The load balancers of docs/production.md, run as the page gives them: its HAProxy configuration and its
 * nginx site, each read from the page's marked block, with only what must differ on a test machine
 * replaced (the instances' addresses, the listening port, the certificate's paths), each replacement
 * checked to match exactly once, so that the page cannot drift from what the tests run. Debian's `haproxy`
 * and `nginx` packages, started by the test in the foreground and stopped when the test file ends.
 */

const run = promisify(execFile);
const PRODUCTION_MD = fileURLToPath(new URL('../../../../../docs/production.md', import.meta.url));
/** The instances the page's configurations name, in order. */
const PAGE_INSTANCES = ['10.0.0.11:8080', '10.0.0.12:8080'];
const PAGE_HOST = 'plants.example';

export type BalancerKind = 'haproxy' | 'nginx';

const BINARIES: Record<BalancerKind, string> = { haproxy: '/usr/sbin/haproxy', nginx: '/usr/sbin/nginx' };

/** Why a balancer's test cannot run here, or undefined when it can. */
export function balancerUnavailableReason(kind: BalancerKind): string | undefined {
  if (existsSync(BINARIES[kind])) return undefined;
  return `${BINARIES[kind]} not found: install Debian's "${kind}" package (apt-get install ${kind}) to run the load balancer tests`;
}

/** A balancer running in front of the instances: its https:// origin, and the certificate clients must trust. */
export interface Balancer {
  readonly kind: BalancerKind;
  readonly origin: string;
  /** What its clients speak: HTTP/1.1 to HAProxy; HTTP/2 to nginx, whose reloads close idle connections (transport.ts). */
  readonly protocol: 'http/1.1' | 'h2';
  /** The self-signed certificate (PEM) the balancer presents, for plants.example. */
  readonly ca: string;
  readonly servername: string;
  /** What the balancer wrote on stderr (HAProxy's request log, nginx's errors). */
  output(): string;
  /**
   * What an operator does before stopping instance `index` and after it is ready again, as the pages say
   * (docs/production.md, docs/upgrading.md): for HAProxy nothing, its checks of /readyz follow the drain,
   * unless the instance runs a release that does not drain (`drains` false: 1.0.0), which its runtime API
   * puts in maintenance first; for nginx, which checks nothing, `down` on its server line and a reload, then
   * the line as it was and a reload.
   */
  takeOut(index: number, drains: boolean): Promise<void>;
  putBack(index: number): Promise<void>;
}

/** The fenced block right after the marker comment that starts with `marker`. */
export function pageBlock(marker: string): string {
  const text = readFileSync(PRODUCTION_MD, 'utf8');
  const found = new RegExp(`^<!-- ${marker}[^\\n]*-->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\`$`, 'm').exec(text);
  assert.ok(found, `docs/production.md has a block marked <!-- ${marker} -->`);
  return found[1]!;
}

/** `text` with `from` replaced by `to`, where `from` occurs exactly once (the page changed otherwise). */
function replaceOnce(text: string, from: string, to: string): string {
  const count = text.split(from).length - 1;
  assert.equal(count, 1, `docs/production.md's balancer block names ${JSON.stringify(from)} once (found ${count} times)`);
  return text.replace(from, () => to);
}

/** A self-signed certificate for the page's host name, made with openssl: its key and certificate (PEM). */
async function certificate(dir: string): Promise<{ key: string; cert: string }> {
  const key = join(dir, 'tls.key');
  const cert = join(dir, 'tls.crt');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${PAGE_HOST}`,
    '-addext',
    `subjectAltName=DNS:${PAGE_HOST}`,
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

/** The page's HAProxy configuration, for instances on these loopback ports, listening on `port`. */
export function haproxyConfig(ports: readonly number[], port: number, pem: string, socket: string): string {
  let config = pageBlock('haproxy config');
  config = replaceOnce(config, 'bind :443 ssl crt /etc/haproxy/plants.example.pem', `bind 127.0.0.1:${port} ssl crt ${pem}`);
  config = instancesAt(config, ports);
  // The package's global section stays where the page's configuration goes; a test's own in its place,
  // with the runtime API (Debian's has it at /run/haproxy/admin.sock).
  return `global\n    log stderr format raw local0 info\n    maxconn 2000\n    stats socket ${socket} mode 600 level admin\n\n${config}\n`;
}

/**
 * The page's nginx site, for instances on these loopback ports, listening on `port`, inside a whole
 * nginx.conf of its own; the instances of `down` taken out as the page says.
 */
export function nginxConfig(
  ports: readonly number[],
  port: number,
  dir: string,
  files: { key: string; cert: string },
  down: ReadonlySet<number> = new Set(),
): string {
  let site = pageBlock('nginx site');
  for (const index of down) site = takenOut(site, PAGE_INSTANCES[index]!);
  site = replaceOnce(site, 'listen 443 ssl http2;', `listen 127.0.0.1:${port} ssl http2;`);
  site = replaceOnce(site, 'ssl_certificate     /etc/ssl/plants.example.pem;', `ssl_certificate     ${files.cert};`);
  site = replaceOnce(site, 'ssl_certificate_key /etc/ssl/plants.example.key;', `ssl_certificate_key ${files.key};`);
  site = instancesAt(site, ports);
  // What Debian's /etc/nginx/nginx.conf gives a site, with its paths in the test's folder.
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `    ${name}_temp_path ${join(dir, name)};`).join('\n');
  return [
    process.getuid?.() === 0 ? 'user root;' : '',
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    // notice: the reloads' lines ("start worker process") say when a new configuration serves.
    'error_log stderr notice;',
    'events { worker_connections 1024; }',
    'http {',
    `    access_log ${join(dir, 'access.log')};`,
    temp,
    site
      .split('\n')
      .map((line) => `    ${line}`)
      .join('\n'),
    '}',
    '',
  ].join('\n');
}

/** The page's way of taking an instance out of nginx's upstream: `down` at the end of its server line. */
function takenOut(site: string, address: string): string {
  const line = new RegExp(`^(\\s*server ${address.replaceAll('.', '\\.')}\\b[^;]*);`, 'm');
  assert.match(site, line, `the nginx site has a server line for ${address}`);
  return site.replace(line, '$1 down;');
}

function instancesAt(config: string, ports: readonly number[]): string {
  assert.equal(ports.length, PAGE_INSTANCES.length, 'the page names two instances');
  return PAGE_INSTANCES.reduce((text, address, i) => replaceOnce(text, address, `127.0.0.1:${ports[i]}`), config);
}

/** Starts the page's balancer of this kind in front of instances on `ports`; stopped when the file ends. */
export async function startBalancer(cleanup: typeof after, kind: BalancerKind, ports: readonly number[]): Promise<Balancer> {
  const dir = tempDir(cleanup);
  // nginx's workers run as another user when it is started as root: they must reach the folder.
  chmodSync(dir, 0o755);
  const files = await certificate(dir);
  const port = await freePort();
  let args: string[];
  let reconfigure: (down: ReadonlySet<number>, drains: boolean) => Promise<void>;
  if (kind === 'haproxy') {
    const pem = join(dir, 'tls.pem');
    const socket = join(dir, 'admin.sock');
    writeFileSync(pem, files.cert + files.key);
    const config = haproxyConfig(ports, port, pem, socket);
    writeFileSync(join(dir, 'haproxy.cfg'), config);
    args = ['-db', '-f', join(dir, 'haproxy.cfg')];
    await run(BINARIES.haproxy, ['-c', '-q', '-f', join(dir, 'haproxy.cfg')]);
    const servers = haproxyServers(config);
    const inMaintenance = new Set<number>();
    reconfigure = async (down, drains) => {
      for (const index of [...down, ...inMaintenance]) {
        const wanted = down.has(index) && !drains ? 'maint' : 'ready';
        if ((wanted === 'maint') === inMaintenance.has(index)) continue;
        const answer = await runtimeApi(socket, `set server ${servers[index]} state ${wanted}`);
        assert.equal(answer.trim(), '', `HAProxy's runtime API: set server ${servers[index]} state ${wanted}`);
        if (wanted === 'maint') inMaintenance.add(index);
        else inMaintenance.delete(index);
      }
    };
  } else {
    const paths = { key: join(dir, 'tls.key'), cert: join(dir, 'tls.crt') };
    for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, name));
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, nginxConfig(ports, port, dir, paths));
    args = ['-p', dir, '-c', conf, '-g', 'daemon off;'];
    await run(BINARIES.nginx, [...args, '-t', '-q']);
    // `nginx -s reload`, as the page says; done once the master has started its workers on the new configuration.
    reconfigure = async (down) => {
      writeFileSync(conf, nginxConfig(ports, port, dir, paths, down));
      const started = workersStarted(output);
      await run(BINARIES.nginx, ['-p', dir, '-c', conf, '-s', 'reload']);
      await waitFor(() => workersStarted(output) > started, `nginx to reload:\n${output}`);
    };
  }
  const child = spawn(BINARIES[kind], args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  await listening(child, port, () => output);
  const down = new Set<number>();
  return {
    kind,
    origin: `https://127.0.0.1:${port}`,
    protocol: kind === 'nginx' ? 'h2' : 'http/1.1',
    ca: files.cert,
    servername: PAGE_HOST,
    output: () => output,
    async takeOut(index, drains) {
      down.add(index);
      await reconfigure(down, drains);
    },
    async putBack(index) {
      down.delete(index);
      await reconfigure(down, true);
    },
  };
}

/** The page's HAProxy servers, as the runtime API names them (backend/server), in order. */
function haproxyServers(config: string): string[] {
  const backend = /^backend (\S+)$/m.exec(config)?.[1];
  assert.ok(backend, 'the HAProxy configuration has a backend');
  return [...config.matchAll(/^\s*server (\S+) 127\.0\.0\.1:\d+/gm)].map((found) => `${backend}/${found[1]}`);
}

/** One command to HAProxy's runtime API (its stats socket, level admin); its answer. */
function runtimeApi(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = connect(socket);
    let answer = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (answer += chunk));
    connection.once('error', reject);
    connection.once('close', () => resolve(answer));
    connection.end(`${command}\n`);
  });
}

function workersStarted(output: string): number {
  return (output.match(/start worker process \d+/g) ?? []).length;
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the balancer accepts connections on `port`, or fails with what it said when it exits first. */
async function listening(child: ChildProcess, port: number, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the balancer exited before listening:\n${output()}`);
    const connected = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (connected) return;
    if (Date.now() > deadline) throw new Error(`the balancer did not listen on ${port} within 30 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
