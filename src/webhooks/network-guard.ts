import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * No server-side request forgery: by default a webhook may only reach the public internet. A URL's host
 * must resolve only to public addresses, checked when the endpoint is registered and again on every
 * delivery, where the connection goes to the very address that was checked (the check is the
 * connection's DNS lookup, so a second lookup cannot be rebound to a private address).
 */

/**
 * The address blocks a webhook may not reach, each with what it is: every block of IANA's IPv4 and IPv6
 * special-purpose address registries that is not globally reachable (checked against both registries as
 * of 2025: RFC 6890 and its updates, RFC 8215, RFC 9602, RFC 9637, RFC 9780), plus multicast, site-local
 * and the reserved ranges. Matched by node:net's BlockList.
 */
type Block = readonly [prefix: string, bits: number, what: string];

const IPV4_BLOCKS: readonly Block[] = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata included)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved (and broadcast)'],
];

/** Refused whatever they carry; the forms below that carry an IPv4 address are judged by it. First match names it. */
const IPV6_BLOCKS: readonly Block[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['::ffff:0:0:0', 96, 'IPv4-translated'],
  ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation (NAT64)'],
  ['100::', 64, 'discard-only'],
  ['100:0:0:1::', 64, 'the dummy prefix'],
  ['2001::', 23, 'IETF protocol assignments (Teredo 2001::/32 included)'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['5f00::', 16, 'segment routing (SRv6) SIDs'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated)'],
  ['ff00::', 8, 'multicast'],
];

/** Global unicast: an IPv6 address outside it (and outside the IPv4-carrying forms) is not a public one. */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

function blockLists(blocks: readonly Block[], family: 'ipv4' | 'ipv6'): Array<[BlockList, string]> {
  return blocks.map(([prefix, bits, what]) => {
    const list = new BlockList();
    list.addSubnet(prefix, bits, family);
    return [list, what];
  });
}

const IPV4_LISTS = blockLists(IPV4_BLOCKS, 'ipv4');
const IPV6_LISTS = blockLists(IPV6_BLOCKS, 'ipv6');

/** The 16 bytes of an IPv6 address in any valid spelling (`::`, an embedded dotted quad). */
function ipv6Bytes(address: string): Uint8Array {
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (group.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
        return [(a << 8) | b, (c << 8) | d];
      }
      return [parseInt(group, 16)];
    });
  };
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}

const startsWith = (bytes: Uint8Array, prefix: readonly number[]) => prefix.every((byte, i) => bytes[i] === byte);
const MAPPED = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const NAT64 = [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
const SIX_TO_FOUR = [0x20, 0x02];

/**
 * The IPv4 address that an IPv6 address reaches, for the forms that carry one and are globally routed
 * by it: IPv4-mapped (::ffff:0:0/96), the well-known NAT64 prefix (64:ff9b::/96) and 6to4 (2002::/16).
 */
function carriedIpv4(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, MAPPED) || startsWith(bytes, NAT64)) return bytes.slice(12, 16).join('.');
  if (startsWith(bytes, SIX_TO_FOUR)) return bytes.slice(2, 6).join('.');
  return undefined;
}

/** Why an address may not be reached, or undefined when it is a public one. */
export function forbiddenAddress(text: string): string | undefined {
  const address = text.replace(/%.*$/, ''); // an IPv6 zone id names an interface, not an address
  const family = isIP(address);
  if (family === 4) return IPV4_LISTS.find(([list]) => list.check(address, 'ipv4'))?.[1];
  if (family !== 6) return 'not an IP address';
  const bytes = ipv6Bytes(address);
  // Judged by its own 16 bytes: BlockList would judge an IPv4-mapped address by its IPv4 part.
  const canonical = Array.from({ length: 8 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16)).join(':');
  const carried = carriedIpv4(bytes);
  const blocked = IPV6_LISTS.find(([list]) => !startsWith(bytes, MAPPED) && list.check(canonical, 'ipv6'))?.[1];
  if (blocked !== undefined) return blocked;
  if (carried !== undefined) {
    const inner = forbiddenAddress(carried);
    return inner === undefined ? undefined : `${inner}, inside an IPv6 address`;
  }
  return GLOBAL_UNICAST.check(canonical, 'ipv6') ? undefined : 'reserved (outside global unicast, 2000::/3)';
}

/**
 * Which address of a host the guard refused, and by which rule, or why the name did not resolve (address
 * empty): for the log only, never an answer.
 */
export interface RefusedAddress {
  host: string;
  address: string;
  rule: string;
}

/**
 * A webhook URL that may not be registered or delivered to; its message says why, in words fit for the
 * client. A host refused for its addresses carries them in `refused`: the message never names an address
 * that a name resolves to (an answer would otherwise map the service's internal network for the caller).
 */
export class WebhookUrlError extends Error {
  constructor(
    message: string,
    readonly refused?: RefusedAddress,
  ) {
    super(message);
    this.name = 'WebhookUrlError';
  }
}

/**
 * The host's lookup did not answer within the bound registration gives it (WEBHOOK_DNS_TIMEOUT_MS): not a
 * verdict on the URL, which may well be fine, but on the service's resolver (or the name's servers) now.
 */
export class HostLookupTimeout extends Error {
  constructor(
    readonly host: string,
    readonly timeoutMs: number,
  ) {
    super(`the DNS lookup of ${host} did not answer within ${timeoutMs} ms`);
    this.name = 'HostLookupTimeout';
  }
}

export const URL_MAX_LENGTH = 2048;

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/**
 * The resolver, its answer awaited at most `timeoutMs` (then HostLookupTimeout). The lookup itself cannot be
 * cancelled (getaddrinfo): it ends when the resolver gives up, but the request no longer waits for it.
 */
function bounded(resolver: Resolver, timeoutMs: number): Resolver {
  return (hostname) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new HostLookupTimeout(hostname, timeoutMs)), timeoutMs);
      resolver(hostname).then(
        (addresses) => {
          clearTimeout(timer);
          resolve(addresses);
        },
        (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
}

/** The URL's host with IPv6 brackets removed. */
function host(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Said with a refused address to whoever registers the URL (the API's answer, the CLI): the setting that allows it. */
export const ALLOW_PRIVATE_NETWORKS_HINT = 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true allows it, for development only';

/** The refusal of a host for its addresses: the host in the message, the address and rule in `refused`. */
export function notPublic(host: string, refused: RefusedAddress): WebhookUrlError {
  return new WebhookUrlError(`the host ${host} is not a public address: webhooks may only reach the public internet`, refused);
}

/**
 * The addresses a URL's host stands for, each checked; the first forbidden one is an error. A name that
 * does not resolve is refused in the same words as one that resolves to an internal address: told apart,
 * `localhost` or `db.internal` ("not a public address") from a made-up name ("does not resolve"), the
 * answers would tell a caller which internal names exist. Why it failed goes to the log.
 */
async function resolvePublic(url: URL, resolver: Resolver): Promise<LookupAddress[]> {
  const hostname = host(url);
  const family = isIP(hostname);
  let addresses: LookupAddress[];
  if (family !== 0) addresses = [{ address: hostname, family }];
  else {
    let failure: string | undefined;
    try {
      addresses = await resolver(hostname);
    } catch (error) {
      // No answer in time says nothing of the name: not refused as one that does not resolve.
      if (error instanceof HostLookupTimeout) throw error;
      addresses = [];
      failure = (error as NodeJS.ErrnoException).code ?? String(error);
    }
    if (addresses.length === 0) throw notPublic(hostname, { host: hostname, address: '', rule: `does not resolve (${failure ?? 'no address'})` });
  }
  for (const { address } of addresses) {
    const rule = forbiddenAddress(address);
    if (rule !== undefined) throw notPublic(hostname, { host: hostname, address, rule });
  }
  return addresses;
}

/**
 * The URL as an endpoint may hold it: absolute http(s), at most URL_MAX_LENGTH characters (as sent and
 * as normalised), no credentials. What is stored, shown and delivered to is its `href`, the WHATWG
 * parser's normal form (tabs and line breaks removed, spaces and controls percent-encoded, the host
 * lowercased and numeric forms spelled out), never the text as sent.
 */
export function parseWebhookUrl(text: string): URL {
  const tooLong = new WebhookUrlError(`must be at most ${URL_MAX_LENGTH} characters`);
  if (text.length > URL_MAX_LENGTH) throw tooLong;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookUrlError('must be an absolute http:// or https:// URL');
  if (url.username !== '' || url.password !== '') throw new WebhookUrlError('must not carry a user name or password');
  if (url.href.length > URL_MAX_LENGTH) throw tooLong;
  return url;
}

/**
 * Checks a URL for registration: its form, then (unless private networks are allowed) every address its
 * host resolves to, the lookup awaited at most `lookupTimeoutMs` (HostLookupTimeout past it; unbounded
 * without it: the resolver's own time-outs).
 */
export async function checkWebhookUrl(
  text: string,
  options: { allowPrivate: boolean; resolver?: Resolver | undefined; lookupTimeoutMs?: number | undefined },
): Promise<URL> {
  const url = parseWebhookUrl(text);
  if (options.allowPrivate) return url;
  const resolver = options.resolver ?? systemResolver;
  await resolvePublic(url, options.lookupTimeoutMs === undefined ? resolver : bounded(resolver, options.lookupTimeoutMs));
  return url;
}

/**
 * The DNS lookup of every delivery's connection (undici's `connect.lookup`): the host is resolved once,
 * every address checked, and the connection made to an address that passed. An IP literal in the URL is
 * not looked up by Node at all, so the dispatcher checks those with `forbiddenAddress` before sending.
 */
export function guardedLookup(resolver: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolvePublic(new URL(`http://${isIP(hostname) === 6 ? `[${hostname}]` : hostname}/`), resolver).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        const usable = wanted.length > 0 ? wanted : addresses;
        if (options.all) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: Error) => callback(Object.assign(error, { code: 'EWEBHOOKFORBIDDEN' }) as NodeJS.ErrnoException, '', 0),
    );
  };
}
