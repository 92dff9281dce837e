import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/**
 * No server-side request forgery: by default a webhook may only reach the public internet. A URL's host
 * must resolve only to public addresses, checked when the endpoint is registered and again on every
 * delivery, where the connection goes to the very address that was checked (the check is the
 * connection's DNS lookup, so a second lookup cannot be rebound to a private address).
 */

/** An address block: the first bytes of the prefix and its length in bits. */
type Block = readonly [bytes: readonly number[], bits: number, what: string];

const IPV4_BLOCKS: readonly Block[] = [
  [[0], 8, 'unspecified ("this network")'],
  [[10], 8, 'private'],
  [[100, 64], 10, 'shared address space (CGNAT)'],
  [[127], 8, 'loopback'],
  [[169, 254], 16, 'link-local (cloud metadata included)'],
  [[172, 16], 12, 'private'],
  [[192, 0, 0], 24, 'IETF protocol assignments'],
  [[192, 0, 2], 24, 'documentation'],
  [[192, 88, 99], 24, '6to4 relay anycast'],
  [[192, 168], 16, 'private'],
  [[198, 18], 15, 'benchmarking'],
  [[198, 51, 100], 24, 'documentation'],
  [[203, 0, 113], 24, 'documentation'],
  [[224], 4, 'multicast'],
  [[240], 4, 'reserved (and broadcast)'],
];

const IPV6_BLOCKS: readonly Block[] = [
  [[], 128, 'unspecified'], // ::/128 is checked by value below; kept here for the message
  [[0xfc], 7, 'unique local (private)'],
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'site-local (deprecated)'],
  [[0xff], 8, 'multicast'],
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, 'discard-only'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'documentation'],
];

function inBlock(bytes: Uint8Array, [prefix, bits]: Block): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const take = Math.min(8, bits - i * 8);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function ipv4Bytes(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** The 16 bytes of an IPv6 address in any valid spelling (`::`, an embedded dotted quad, a zone id). */
function ipv6Bytes(text: string): Uint8Array {
  const address = text.replace(/%.*$/, '');
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (group.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(group);
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

/** Why an address may not be reached, or undefined when it is a public one. */
export function forbiddenAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) {
    const bytes = ipv4Bytes(address);
    return IPV4_BLOCKS.find((block) => inBlock(bytes, block))?.[2];
  }
  if (family !== 6) return 'not an IP address';
  const bytes = ipv6Bytes(address);
  if (bytes.every((b) => b === 0)) return 'unspecified';
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1) return 'loopback';
  // IPv4 carried inside IPv6 reaches that IPv4 address: mapped (::ffff:0:0/96), compatible (::/96),
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) forms are judged by the IPv4 address they carry.
  const embedded =
    (bytes.slice(0, 10).every((b) => b === 0) && ((bytes[10] === 0xff && bytes[11] === 0xff) || (bytes[10] === 0 && bytes[11] === 0))) ||
    (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && bytes.slice(4, 12).every((b) => b === 0))
      ? bytes.slice(12, 16)
      : bytes[0] === 0x20 && bytes[1] === 0x02
        ? bytes.slice(2, 6)
        : undefined;
  if (embedded) {
    const inner = forbiddenAddress(Array.from(embedded).join('.'));
    if (inner !== undefined) return `${inner}, inside an IPv6 address`;
  }
  return IPV6_BLOCKS.slice(1).find((block) => inBlock(bytes, block))?.[2];
}

/** A webhook URL that may not be registered or delivered to; its message says why. */
export class WebhookUrlError extends Error {}

export const URL_MAX_LENGTH = 2048;

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** The URL's host with IPv6 brackets removed. */
function host(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The addresses a URL's host stands for, each checked; the first forbidden one is an error. */
async function resolvePublic(url: URL, resolver: Resolver): Promise<LookupAddress[]> {
  const hostname = host(url);
  const family = isIP(hostname);
  let addresses: LookupAddress[];
  if (family !== 0) addresses = [{ address: hostname, family }];
  else {
    try {
      addresses = await resolver(hostname);
    } catch (error) {
      throw new WebhookUrlError(`the host ${hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    if (addresses.length === 0) throw new WebhookUrlError(`the host ${hostname} does not resolve`);
  }
  for (const { address } of addresses) {
    const why = forbiddenAddress(address);
    if (why !== undefined) {
      throw new WebhookUrlError(
        `${hostname === address ? address : `the host ${hostname} resolves to ${address}, which`} is ${why}: webhooks may only reach public addresses (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lifts this)`,
      );
    }
  }
  return addresses;
}

/** The URL as an endpoint may hold it: absolute http(s), at most URL_MAX_LENGTH characters, no credentials. */
export function parseWebhookUrl(text: string): URL {
  if (text.length > URL_MAX_LENGTH) throw new WebhookUrlError(`must be at most ${URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookUrlError('must be an absolute http:// or https:// URL');
  if (url.username !== '' || url.password !== '') throw new WebhookUrlError('must not carry a user name or password');
  return url;
}

/** Checks a URL for registration: its form, then (unless private networks are allowed) every address its host resolves to. */
export async function checkWebhookUrl(text: string, options: { allowPrivate: boolean; resolver?: Resolver }): Promise<URL> {
  const url = parseWebhookUrl(text);
  if (!options.allowPrivate) await resolvePublic(url, options.resolver ?? systemResolver);
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
