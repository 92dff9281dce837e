/**
 * libpq's connection URI with several hosts, which pg (node-postgres) does not read:
 * `postgres://user:password@h1:5432,h2:5432,[::1]:5433/plants?target_session_attrs=read-write`.
 * Each host becomes a single-host URL of its own, the rest of the URL kept as written (user, password,
 * database, sslmode and the other parameters stay pg's to read), plus what it takes to choose among the
 * hosts: target_session_attrs and connect_timeout. No pg import here: the configuration checks URLs with
 * it, and a SQLite start must not load the driver.
 */

/** Which sessions a connection may settle on (libpq's target_session_attrs, the values supported here). */
export const SESSION_ATTRS = ['read-write', 'primary', 'any', 'standby', 'read-only'] as const;
export type SessionAttrs = (typeof SESSION_ATTRS)[number];

export interface PostgresHost {
  /** `host:port` as a person reads it, for messages and logs; never holds the password. */
  label: string;
  /** The whole URL with this one host, for pg. */
  url: string;
}

export interface PostgresUrl {
  hosts: PostgresHost[];
  /** As written; undefined when the URL does not say. */
  sessionAttrs: SessionAttrs | undefined;
  /** libpq's connect_timeout, per host, in milliseconds; undefined when the URL does not say. */
  connectTimeoutMs: number | undefined;
}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)([^/?]*)([^?]*)(?:\?(.*))?$/s;
const DEFAULT_PORT = 5432;

/** Parses a postgres:// URL with one host or several; throws an Error saying what is wrong, never repeating the password. */
export function parsePostgresUrl(url: string): PostgresUrl {
  const parts = URL_PARTS.exec(url);
  if (!parts) throw new Error('must be postgres://user:password@host:port/database');
  const [, scheme, authority, path, query] = parts as unknown as [string, string, string, string, string | undefined];
  // The host list follows the last @: an unencoded @ in a password stays part of the password.
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at);
  const hostList = authority.slice(at + 1);
  const colon = userinfo.indexOf(':');
  checkEncoding(colon === -1 ? userinfo : userinfo.slice(0, colon), 'the user name');
  checkEncoding(colon === -1 ? '' : userinfo.slice(colon + 1), 'the password');
  checkEncoding(path, 'the database name');

  const params = (query ?? '').split('&').filter((p) => p !== '');
  const value = (name: string) => {
    const found = params.filter((p) => p.split('=')[0] === name).map((p) => decode(p.slice(name.length + 1), `the ${name} parameter`));
    if (found.length > 1) throw new Error(`names ${name} more than once`);
    return found[0];
  };
  const sessionAttrs = value('target_session_attrs');
  if (sessionAttrs !== undefined && !(SESSION_ATTRS as readonly string[]).includes(sessionAttrs)) {
    throw new Error(`target_session_attrs must be one of ${SESSION_ATTRS.join(', ')}, got "${sessionAttrs}"`);
  }
  const connectTimeout = value('connect_timeout');
  if (connectTimeout !== undefined && !/^\d{1,6}$/.test(connectTimeout)) {
    throw new Error(`connect_timeout must be a whole number of seconds, got "${connectTimeout}"`);
  }
  if ((value('host') ?? '').includes(',') || (value('port') ?? '').includes(',')) {
    throw new Error('lists several hosts in a host= or port= parameter: list them in the URL itself, postgres://user@h1:5432,h2:5432/db');
  }
  // pg does not know target_session_attrs; every other parameter is pg's to read, as it always was.
  const rest = params.filter((p) => p.split('=')[0] !== 'target_session_attrs');
  const tail = `${path}${rest.length > 0 ? `?${rest.join('&')}` : ''}`;

  const specs = hostList.split(',');
  const hosts = specs.map((spec, i) => {
    const n = specs.length === 1 ? 'the host' : `host ${i + 1}`;
    const { host, port } = splitHost(spec, n, specs.length === 1);
    const hostUrl = `${scheme}${at === -1 ? '' : `${userinfo}@`}${spec}${tail}`;
    // pg reads each of these URLs with the WHATWG parser (an empty host it fills in itself).
    if (host !== '' && !URL.canParse(hostUrl)) throw new Error(`${n} ("${spec}") is not a host name or address`);
    const shownHost = host.includes(':') ? `[${host}]` : host === '' ? 'localhost' : host;
    return { label: `${shownHost}:${port ?? DEFAULT_PORT}`, url: hostUrl };
  });
  return {
    hosts,
    sessionAttrs: sessionAttrs as SessionAttrs | undefined,
    // libpq reads 0 as "wait for ever", and raises 1 to 2 seconds.
    connectTimeoutMs: connectTimeout === undefined || Number(connectTimeout) === 0 ? undefined : Math.max(2, Number(connectTimeout)) * 1000,
  };
}

/** `host`, `host:port`, `[v6]`, `[v6]:port`; an empty host only when it is the only one (pg's default host). */
function splitHost(spec: string, n: string, only: boolean): { host: string; port: string | undefined } {
  let host: string;
  let rest: string;
  if (spec.startsWith('[')) {
    const close = spec.indexOf(']');
    if (close === -1) throw new Error(`${n} ("${spec}") opens an IPv6 address with [ but does not close it`);
    host = spec.slice(1, close);
    rest = spec.slice(close + 1);
    if (!/^[0-9A-Fa-f:.]+(%25[\w.~-]+)?$/.test(host)) throw new Error(`${n} ("${spec}") is not an IPv6 address`);
  } else {
    const colon = spec.indexOf(':');
    host = decode(colon === -1 ? spec : spec.slice(0, colon), n);
    rest = colon === -1 ? '' : spec.slice(colon);
    if (!/^[\w.~%/-]*$/.test(host) || rest.lastIndexOf(':') > 0) {
      throw new Error(`${n} ("${spec}") is not a host name or address (an IPv6 address goes in brackets: [::1]:5432)`);
    }
  }
  if (host === '' && !only) throw new Error(`${n} is empty (hosts are separated by commas)`);
  if (rest === '') return { host, port: undefined };
  const port = rest.slice(1);
  if (!rest.startsWith(':') || !/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new Error(`${n} ("${spec}") has a port that is not a number from 1 to 65535`);
  }
  return { host, port };
}

/** The text a percent-encoded part spells; the message names the part, never its text (it may be the password). */
function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new Error(`${what} is not valid percent-encoding (write a % itself as %25)`);
  }
}

function checkEncoding(text: string, what: string): void {
  decode(text, what);
}
