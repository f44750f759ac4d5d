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

/** Why an address may not receive webhooks, or null when it may. */
export function refusalOf(address: string, allowPrivate: boolean): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it carries,
  // so the mapped form of a refused address is refused too.
  const ip = ipaddr.process(address);
  const shown = ip.toString();
  if (METADATA.has(shown)) return `${shown} is a cloud metadata address`;
  const range = ip.range();
  if (range === 'unicast') return null;
  if (allowPrivate && !ALWAYS_REFUSED.has(range)) return null;
  return `${shown} is ${RANGE_NAMES[range] ?? `a special-purpose (${range})`} address`;
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
