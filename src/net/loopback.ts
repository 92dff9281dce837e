import { BlockList, isIP } from 'node:net';

/** The loopback addresses: 127.0.0.0/8 and ::1 (an IPv4-mapped ::ffff:127.x.y.z matches the IPv4 block). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Whether a host, as a URL's hostname or a Host header's name spells it (IPv6 in brackets or not, any
 * case), is this machine's loopback: `localhost`, 127.0.0.0/8 or ::1. A name other than `localhost` is
 * never loopback here, whatever it resolves to today: DNS can change its answer.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = isIP(name);
  if (family === 0) return name.toLowerCase() === 'localhost';
  return LOOPBACK.check(name, family === 4 ? 'ipv4' : 'ipv6');
}
