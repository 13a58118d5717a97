import { BlockList, isIP } from 'node:net';
import { ValidationError } from '../lib/errors.js';

/** Decides whether a resolved IP address may be connected to. */
export type AddressPolicy = (address: string) => boolean;

const blocked = new BlockList();
// IPv4: "this network", private, CGNAT, loopback, link-local (incl. cloud metadata 169.254.169.254),
// IETF protocol assignments, documentation, benchmarking, multicast, reserved and broadcast.
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
// IPv6: unspecified, loopback, link-local, unique-local (incl. AWS metadata fd00:ec2::254),
// multicast, discard-only, documentation.
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fe80::', 10],
  ['fc00::', 7],
  ['ff00::', 8],
  ['100::', 64],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Expands an IPv6 address into its eight 16-bit groups (handles `::` and a dotted IPv4 tail). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -dotted[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach an IPv4 host: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`). Without this,
 * `::ffff:127.0.0.1` would slip past the IPv4 rules.
 */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (g.length !== 8) return null;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  const mapped = zeros(5) && g[5] === 0xffff;
  const compatible = zeros(6) && (g[6] !== 0 || g[7]! > 1);
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (!mapped && !compatible && !nat64) return null;
  return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
}

/**
 * True when the address is public: not private, loopback, link-local, CGNAT, multicast, reserved,
 * unique-local or cloud metadata, also when written as an IPv4-mapped IPv6 address. Anything that
 * is not a valid IP literal is refused.
 */
export const isPublicAddress: AddressPolicy = (address) => {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== null) return !blocked.check(v4, 'ipv4');
  return !blocked.check(address.split('%')[0]!, 'ipv6');
};

/** A policy that allows every address: used when ANSWERDESK_ALLOW_PRIVATE_NETWORK is set. */
export const allowAnyAddress: AddressPolicy = () => true;

/**
 * What an admin-given URL whose host `isPrivateHost` refuses is told, the same for knowledge URLs,
 * sitemaps, webhooks and actions.
 */
export const PRIVATE_HOST_MESSAGE = 'must not point at a private, loopback or link-local address';

/**
 * True when the guard would refuse this URL's host whatever DNS says, so a URL can be refused when
 * it is given instead of failing at every use: a literal IP that is not public (WHATWG URL parsing
 * has already turned `0x7f.1` or `2130706433` into `127.0.0.1`), or `localhost` and any name under
 * it, which always mean loopback (RFC 6761). No other name is resolved here: a name's addresses
 * can change after the check, so the guard checks them at connect time, at every use.
 */
export function isPrivateHost(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host.split('%')[0]!)) return !isPublicAddress(host);
  const name = host.replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Refuses (400, on `url`) an admin-given URL whose host {@link isPrivateHost} names, unless private
 * networks are allowed (ANSWERDESK_ALLOW_PRIVATE_NETWORK): knowledge URLs, sitemaps, webhooks and
 * actions say the same. `null` (no URL to judge) passes.
 */
export function refusePrivateHost(url: URL | null, allowPrivateNetwork: boolean): void {
  if (!allowPrivateNetwork && url && isPrivateHost(url)) throw ValidationError([{ path: 'url', message: PRIVATE_HOST_MESSAGE }]);
}
