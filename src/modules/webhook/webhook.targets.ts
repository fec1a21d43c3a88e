import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Whether endpoints may reach non-public addresses (WEBHOOK_ALLOW_PRIVATE_TARGETS). */
export type TargetPolicy = { allowPrivateTargets: boolean };

export const PUBLIC_TARGETS_ONLY: TargetPolicy = { allowPrivateTargets: false };

/** IPv4 ranges that are not the public internet: [first address, prefix length]. */
const PRIVATE_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function v4Number(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function isPrivateV4(address: string): boolean {
  const value = v4Number(address);
  return PRIVATE_V4.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    return Math.floor(value / size) === Math.floor(v4Number(base) / size);
  });
}

/** An IPv6 address as its eight 16-bit groups (an embedded dotted IPv4 tail included). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = v4Number(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const v4Of = (high: number, low: number) =>
  [high >>> 8, high & 0xff, low >>> 8, low & 0xff].map(String).join('.');

function isPrivateV6(address: string): boolean {
  const g = v6Groups(address);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const zeroTo = (n: number) => g.slice(0, n).every((group) => group === 0);
  // ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d (translated): the IPv4 address decides.
  if (zeroTo(5) && g5 === 0xffff) return isPrivateV4(v4Of(g6, g7));
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return isPrivateV4(v4Of(g6, g7));
  // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d.
  if (zeroTo(6)) return true;
  // 64:ff9b::/96 (NAT64) carries an IPv4 address; 2002::/16 (6to4) too.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return isPrivateV4(v4Of(g6, g7));
  if (g0 === 0x2002) return isPrivateV4(v4Of(g1, g2));
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return true; // site-local fec0::/10 (deprecated)
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return true; // documentation
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return true; // discard 100::/64
  return false;
}

/** Whether `address` (an IP literal) is loopback, private, link-local or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return isPrivateV4(address);
  if (version === 6) return isPrivateV6(address);
  return true;
}

/** A URL's host without the brackets of an IPv6 literal. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Why a URL's host may not receive webhooks, or null when it may (unresolvable hosts may: see below). */
export async function refusedTarget(url: URL, policy: TargetPolicy): Promise<string | null> {
  if (policy.allowPrivateTargets) return null;
  const host = hostOf(url);
  if (isIP(host)) return isPrivateAddress(host) ? `${host} is not a public address` : null;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    // A host that does not resolve now is checked again at every delivery, after a fresh lookup.
    return null;
  }
  const refused = addresses.find(({ address }) => isPrivateAddress(address));
  return refused ? `${host} resolves to ${refused.address}, not a public address` : null;
}

/** The error a delivery ends with when its host resolved to an address it may not reach. */
export class RefusedTargetError extends Error {}
