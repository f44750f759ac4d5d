import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to. Injectable so tests control DNS. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export type UrlCheck =
  | { ok: true; url: URL; hostname: string; address: ResolvedAddress }
  | { ok: false; reason: string };

export interface UrlGuardOptions {
  /** SVC_ALLOW_PRIVATE_WEBHOOK_URLS: http and private addresses, for local receivers. */
  allowPrivate: boolean;
  resolve: ResolveHost;
}

// Instance-metadata and platform endpoints. Most already fall in a refused range
// (169.254.169.254 is link-local, fd00:ec2::254 unique-local, 100.100.100.200 CGNAT), but
// 168.63.129.16 (Azure) is ordinary unicast, and all of them stay refused even when private
// addresses are allowed.
const METADATA = new Set(
  [
    '169.254.169.254',
    '169.254.170.2',
    '169.254.169.253',
    'fd00:ec2::254',
    'fd00:ec2::23',
    '100.100.100.200',
    '192.0.0.192',
    '168.63.129.16',
  ].map((a) => ipaddr.parse(a).toString()),
);

// Never a receiver, whatever the configuration.
const ALWAYS_REFUSED = new Set(['unspecified', 'multicast', 'broadcast']);

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  linkLocal: 'a link-local',
  uniqueLocal: 'a unique-local',
  carrierGradeNat: 'a carrier-grade NAT',
  unspecified: 'an unspecified',
  multicast: 'a multicast',
  broadcast: 'a broadcast',
  reserved: 'a reserved',
};

// IPv6 forms that carry an IPv4 address: a packet to one reaches (through a translator, a
// relay or the host's own stack) the IPv4 address inside, so they are judged by that address.
// ipaddr.js names ::/96 plain unicast and the others special ranges, neither of which says
// where the packet ends up. IPv4-mapped (::ffff:0:0/96) is unwrapped by ipaddr.process.
interface Embedding {
  prefix: [ipaddr.IPv6, number];
  form: string;
  /** The embedded address from the address's 16 bytes. */
  ipv4(bytes: number[]): number[];
}

const EMBEDDINGS: Embedding[] = [
  {
    // Deprecated IPv4-compatible (RFC 4291); :: and ::1 are excluded below.
    prefix: ipaddr.IPv6.parseCIDR('::/96'),
    form: 'an IPv4-compatible',
    ipv4: (b) => b.slice(12, 16),
  },
  {
    // IPv4-translated (RFC 6145).
    prefix: ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'),
    form: 'an IPv4-translated',
    ipv4: (b) => b.slice(12, 16),
  },
  {
    // NAT64 well-known prefix (RFC 6052).
    prefix: ipaddr.IPv6.parseCIDR('64:ff9b::/96'),
    form: 'a NAT64',
    ipv4: (b) => b.slice(12, 16),
  },
  {
    // NAT64 local-use prefix (RFC 8215), a /48: RFC 6052 puts the IPv4 address in bits 48-63
    // and 72-87, around the reserved "u" octet (bits 64-71).
    prefix: ipaddr.IPv6.parseCIDR('64:ff9b:1::/48'),
    form: 'a NAT64',
    ipv4: (b) => [b[6]!, b[7]!, b[9]!, b[10]!],
  },
  {
    // 6to4 (RFC 3056): the site's IPv4 address in bits 16-47.
    prefix: ipaddr.IPv6.parseCIDR('2002::/16'),
    form: 'a 6to4',
    ipv4: (b) => b.slice(2, 6),
  },
  {
    // Teredo (RFC 4380): the client's IPv4 address in the last 32 bits, inverted.
    prefix: ipaddr.IPv6.parseCIDR('2001::/32'),
    form: 'a Teredo',
    ipv4: (b) => b.slice(12, 16).map((x) => x ^ 0xff),
  },
];

/** The IPv4 address an IPv6 address carries, and the form that carries it, if any. */
export function embeddedIPv4(address: string): { ipv4: string; form: string } | null {
  if (!ipaddr.IPv6.isValid(address)) return null;
  const ip = ipaddr.IPv6.parse(address);
  // :: and ::1 are the IPv6 unspecified and loopback addresses, not IPv4-compatible ones.
  const range = ip.range();
  if (range === 'unspecified' || range === 'loopback') return null;
  for (const { prefix, form, ipv4 } of EMBEDDINGS) {
    if (ip.match(prefix)) {
      return { ipv4: new ipaddr.IPv4(ipv4(ip.toByteArray())).toString(), form };
    }
  }
  return null;
}

// IPv6 is an allow-list, not a deny-list: a receiver must be global unicast (2000::/3) and
// outside every block of the IANA IPv6 Special-Purpose Address Registry that lies inside it.
// Everything outside 2000::/3 (::/8 forms such as ::1:127.0.0.1 or 1::127.0.0.1, ULA,
// link-local, NAT64, discard, SRv6 5f00::/16) is refused whatever name ipaddr.js gives it.
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const SPECIAL_PURPOSE: { prefix: [ipaddr.IPv6, number]; name: string }[] = [
  // IETF protocol assignments: Teredo, PCP/TURN anycast, benchmarking, AMT, AS112, ORCHID, DRIP.
  { prefix: ipaddr.IPv6.parseCIDR('2001::/23'), name: 'IETF protocol assignments, 2001::/23' },
  { prefix: ipaddr.IPv6.parseCIDR('2001:db8::/32'), name: 'documentation, 2001:db8::/32' },
  { prefix: ipaddr.IPv6.parseCIDR('2002::/16'), name: '6to4, 2002::/16' },
  { prefix: ipaddr.IPv6.parseCIDR('2620:4f:8000::/48'), name: 'AS112, 2620:4f:8000::/48' },
  { prefix: ipaddr.IPv6.parseCIDR('3fff::/20'), name: 'documentation, 3fff::/20' },
];

/** Why an IPv6 address is no global unicast receiver, or null when it is one. */
function notGlobalUnicast(ip: ipaddr.IPv6): string | null {
  const range = ip.range();
  if (range !== 'unicast' && range in RANGE_NAMES) return `${RANGE_NAMES[range]} address`;
  if (!ip.match(GLOBAL_UNICAST)) return 'not a global unicast address (outside 2000::/3)';
  const special = SPECIAL_PURPOSE.find(({ prefix }) => ip.match(prefix));
  return special ? `a special-purpose (${special.name}) address` : null;
}

/** What kind of address may not receive webhooks ("a loopback address"), or null when it may. */
function refusedKind(address: string, allowPrivate: boolean): string | null {
  // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it carries,
  // so the mapped form of a refused address is refused too.
  const ip = ipaddr.process(address);
  const shown = ip.toString();
  if (METADATA.has(shown)) return 'a cloud metadata address';
  const embedded = ip.kind() === 'ipv6' ? embeddedIPv4(shown) : null;
  if (embedded) {
    // Whatever the IPv4 rule refuses (the metadata set even with private addresses allowed)
    // is refused in every form that reaches it; a public IPv4 address keeps its forms usable.
    const inner = refusedKind(embedded.ipv4, allowPrivate);
    if (inner) return `${embedded.form} address embedding ${embedded.ipv4}, ${inner}`;
  }
  if (ip.kind() === 'ipv6' && !allowPrivate) return notGlobalUnicast(ip as ipaddr.IPv6);
  const range = ip.range();
  if (range === 'unicast') return null;
  if (allowPrivate && !ALWAYS_REFUSED.has(range)) return null;
  return `${RANGE_NAMES[range] ?? `a special-purpose (${range})`} address`;
}

/** Why an address may not receive webhooks, or null when it may. */
export function refusalOf(address: string, allowPrivate: boolean): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const kind = refusedKind(address, allowPrivate);
  return kind && `${ipaddr.process(address).toString()} is ${kind}`;
}

/**
 * Checks a receiver URL and resolves its host: every address it resolves to must be allowed
 * (one private answer among public ones is enough to refuse). The caller then connects to
 * the returned address, so a second DNS answer (rebinding) is never used.
 */
export async function checkWebhookUrl(raw: string, options: UrlGuardOptions): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url: must be an absolute URL' };
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return {
      ok: false,
      reason: options.allowPrivate ? 'url: must use https or http' : 'url: must use https',
    };
  }
  if (url.username || url.password) {
    return { ok: false, reason: 'url: must not contain credentials' };
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: ResolvedAddress[];
  // WHATWG parsing already turns 2130706433 and 0x7f.1 into 127.0.0.1; ipaddr.js also parses
  // such forms, so a literal is classified whatever shape reached this point.
  if (isIP(hostname) || ipaddr.isValid(hostname)) {
    const ip = ipaddr.parse(hostname);
    addresses = [{ address: ip.toString(), family: ip.kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      addresses = await options.resolve(hostname);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) return { ok: false, reason: `url: ${hostname} does not resolve` };
  }
  for (const { address } of addresses) {
    const refusal = refusalOf(address, options.allowPrivate);
    if (refusal) return { ok: false, reason: `url: ${hostname} is refused: ${refusal}` };
  }
  return { ok: true, url, hostname, address: addresses[0]! };
}
