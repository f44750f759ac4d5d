import { describe, expect, it } from '@jest/globals';
import {
  checkWebhookUrl,
  embeddedIPv4,
  refusalOf,
  type ResolveHost,
} from '../../../src/services/webhook-url-guard.js';

const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
  'localhost.example.com': ['127.0.0.1'],
  'mapped.example.com': ['::ffff:169.254.169.254'],
  'nat64.example.com': ['2606:4700::1111', '64:ff9b::169.254.169.254'],
  'sixtofour.example.com': ['2002:808:808::1'],
};
const resolve: ResolveHost = async (host) =>
  (DNS[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const strict = { allowPrivate: false, resolve };
const lenient = { allowPrivate: true, resolve };

const refusal = async (url: string, options = strict) => {
  const check = await checkWebhookUrl(url, options);
  return check.ok ? null : check.reason;
};

describe('checkWebhookUrl', () => {
  it('accepts an https URL whose every address is public unicast', async () => {
    const check = await checkWebhookUrl('https://hooks.example.com/svc?x=1', strict);
    expect(check).toMatchObject({
      ok: true,
      hostname: 'hooks.example.com',
      address: { address: '93.184.216.34', family: 4 },
    });
  });

  it.each([
    ['https://127.0.0.1/', '127.0.0.1 is a loopback address'],
    ['https://2130706433/', '127.0.0.1 is a loopback address'],
    ['https://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['https://0177.0.0.1/', '127.0.0.1 is a loopback address'],
    ['https://127.1/', '127.0.0.1 is a loopback address'],
    ['https://[::1]/', '::1 is a loopback address'],
    ['https://[::ffff:127.0.0.1]/', '127.0.0.1 is a loopback address'],
    ['https://[::ffff:7f00:1]/', '127.0.0.1 is a loopback address'],
    ['https://[0:0:0:0:0:ffff:10.1.2.3]/', '10.1.2.3 is a private address'],
    ['https://10.0.0.1/', '10.0.0.1 is a private address'],
    ['https://172.16.5.4/', '172.16.5.4 is a private address'],
    ['https://192.168.1.1/', '192.168.1.1 is a private address'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
    ['https://169.254.1.1/', '169.254.1.1 is a link-local address'],
    ['https://[fe80::1]/', 'fe80::1 is a link-local address'],
    ['https://[fd00:ec2::254]/', 'fd00:ec2::254 is a cloud metadata address'],
    ['https://[fc00::1]/', 'fc00::1 is a unique-local address'],
    ['https://100.64.0.1/', '100.64.0.1 is a carrier-grade NAT address'],
    ['https://100.100.100.200/', '100.100.100.200 is a cloud metadata address'],
    ['https://168.63.129.16/', '168.63.129.16 is a cloud metadata address'],
    ['https://192.0.0.192/', '192.0.0.192 is a cloud metadata address'],
    ['https://224.0.0.1/', '224.0.0.1 is a multicast address'],
    ['https://[ff02::1]/', 'ff02::1 is a multicast address'],
    ['https://0.0.0.0/', '0.0.0.0 is an unspecified address'],
    ['https://0/', '0.0.0.0 is an unspecified address'],
    ['https://[::]/', ':: is an unspecified address'],
    ['https://255.255.255.255/', '255.255.255.255 is a broadcast address'],
    ['https://[64:ff9b::7f00:1]/', 'a NAT64 address embedding 127.0.0.1, a loopback address'],
    ['https://[2002:7f00:1::]/', 'a 6to4 address embedding 127.0.0.1, a loopback address'],
    ['https://[::127.0.0.1]/', '::7f00:1 is an IPv4-compatible address embedding 127.0.0.1'],
    ['https://[::a9fe:a9fe]/', 'embedding 169.254.169.254, a cloud metadata address'],
    ['https://[::a00:7]/', '::a00:7 is an IPv4-compatible address embedding 10.0.0.7, a private'],
    [
      'https://nat64.example.com/',
      '64:ff9b::a9fe:a9fe is a NAT64 address embedding 169.254.169.254',
    ],
    ['https://localhost.example.com/', '127.0.0.1 is a loopback address'],
    ['https://mixed.example.com/', '10.0.0.5 is a private address'],
    ['https://mapped.example.com/', '169.254.169.254 is a cloud metadata address'],
  ])('refuses %s', async (url, reason) => {
    const got = await refusal(url);
    expect(got).toMatch(/^url: .+ is refused: /);
    expect(got).toContain(reason);
  });

  it.each([
    ['http://hooks.example.com/', 'url: must use https'],
    ['ftp://hooks.example.com/', 'url: must use https'],
    ['file:///etc/passwd', 'url: must use https'],
    ['not a url', 'url: must be an absolute URL'],
    ['/relative', 'url: must be an absolute URL'],
    ['https://user:pw@hooks.example.com/', 'url: must not contain credentials'],
    ['https://nowhere.example.com/', 'url: nowhere.example.com does not resolve'],
  ])('refuses %s with %j', async (url, reason) => {
    expect(await refusal(url)).toBe(reason);
  });

  it('refuses a host whose resolver fails', async () => {
    const failing: ResolveHost = () => Promise.reject(new Error('ENOTFOUND'));
    expect(await refusal('https://x.example.com/', { allowPrivate: false, resolve: failing })).toBe(
      'url: x.example.com does not resolve',
    );
  });

  it('allows http and private addresses when the operator allows them', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost.example.com/',
      'https://10.0.0.1/',
      'http://[::1]:9/',
    ]) {
      expect({ url, reason: await refusal(url, lenient) }).toEqual({ url, reason: null });
    }
  });

  it('still refuses metadata, unspecified and multicast addresses when private ones are allowed', async () => {
    expect(await refusal('http://169.254.169.254/', lenient)).toContain('cloud metadata');
    expect(await refusal('http://0.0.0.0:80/', lenient)).toContain('unspecified');
    expect(await refusal('http://224.0.0.1/', lenient)).toContain('multicast');
  });

  it('refuses a 6to4 host, a special-purpose block, unless private addresses are allowed', async () => {
    expect(await checkWebhookUrl('https://sixtofour.example.com/', strict)).toEqual({
      ok: false,
      reason:
        'url: sixtofour.example.com is refused: 2002:808:808::1 is a special-purpose (6to4, 2002::/16) address',
    });
    expect(await checkWebhookUrl('https://sixtofour.example.com/', lenient)).toMatchObject({
      ok: true,
      address: { address: '2002:808:808::1', family: 6 },
    });
  });

  it('accepts IPv6 only in global unicast (2000::/3) outside the special-purpose registry', async () => {
    for (const [url, reason] of [
      // ::/8 forms ipaddr.js names plain unicast or reserved; they embed loopback.
      ['https://[::1:127.0.0.1]/', 'not a global unicast address (outside 2000::/3)'],
      ['https://[1::127.0.0.1]/', 'not a global unicast address (outside 2000::/3)'],
      ['https://[::1:0:0:1]/', 'not a global unicast address (outside 2000::/3)'],
      ['https://[100::1]/', 'outside'],
      ['https://[400::1]/', 'outside 2000::/3'],
      ['https://[e000::1]/', 'outside 2000::/3'],
      ['https://[2001:db8::1]/', 'a reserved address'],
      ['https://[3fff::1]/', 'a reserved address'],
      ['https://[2001:2::1]/', 'IETF protocol assignments'],
      ['https://[2620:4f:8000::1]/', 'AS112'],
      ['https://[5f00::1]/', 'outside 2000::/3'],
    ] as const) {
      expect({ url, reason: await refusal(url, strict) }).toEqual({
        url,
        reason: expect.stringContaining(reason),
      });
    }
    for (const url of ['https://[2606:4700::1111]/', 'https://[2001:4860:4860::8888]/']) {
      expect({ url, reason: await refusal(url, strict) }).toEqual({ url, reason: null });
    }
  });
});

describe('refusalOf', () => {
  it('classifies with ipaddr.js and allows only unicast', () => {
    expect(refusalOf('8.8.8.8', false)).toBeNull();
    expect(refusalOf('2606:4700::1111', false)).toBeNull();
    expect(refusalOf('::ffff:8.8.8.8', false)).toBeNull();
    expect(refusalOf('::ffff:192.168.0.1', false)).toBe('192.168.0.1 is a private address');
    expect(refusalOf('not-an-ip', false)).toBe('not-an-ip is not an IP address');
  });
});

// Each form of IPv6 that carries an IPv4 address, written around 127.0.0.1 (loopback),
// 10.0.0.7 (private), 169.254.169.254 (metadata) and 8.8.8.8 (public unicast).
const FORMS: [string, string, Record<string, string>][] = [
  [
    'IPv4-compatible (::/96)',
    'an IPv4-compatible',
    {
      '127.0.0.1': '::7f00:1',
      '10.0.0.7': '::a00:7',
      '169.254.169.254': '::a9fe:a9fe',
      '8.8.8.8': '::808:808',
    },
  ],
  [
    'IPv4-translated (::ffff:0:0:0/96)',
    'an IPv4-translated',
    {
      '127.0.0.1': '::ffff:0:7f00:1',
      '10.0.0.7': '::ffff:0:a00:7',
      '169.254.169.254': '::ffff:0:a9fe:a9fe',
      '8.8.8.8': '::ffff:0:808:808',
    },
  ],
  [
    'NAT64 well-known (64:ff9b::/96)',
    'a NAT64',
    {
      '127.0.0.1': '64:ff9b::7f00:1',
      '10.0.0.7': '64:ff9b::a00:7',
      '169.254.169.254': '64:ff9b::a9fe:a9fe',
      '8.8.8.8': '64:ff9b::808:808',
    },
  ],
  [
    // Bits 48-63 and 72-87; the u octet (bits 64-71) and the suffix are skipped.
    'NAT64 local-use (64:ff9b:1::/48)',
    'a NAT64',
    {
      '127.0.0.1': '64:ff9b:1:7f00:0:1ff:ffff:ffff',
      '10.0.0.7': '64:ff9b:1:a00:0:700::',
      '169.254.169.254': '64:ff9b:1:a9fe:a9:fe00::',
      '8.8.8.8': '64:ff9b:1:808:8:800::',
    },
  ],
  [
    '6to4 (2002::/16)',
    'a 6to4',
    {
      '127.0.0.1': '2002:7f00:1::',
      '10.0.0.7': '2002:a00:7:1::1',
      '169.254.169.254': '2002:a9fe:a9fe::1',
      '8.8.8.8': '2002:808:808::1',
    },
  ],
  [
    // The client address is the last 32 bits inverted; 4136:e378 is the Teredo server.
    'Teredo (2001::/32)',
    'a Teredo',
    {
      '127.0.0.1': '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '10.0.0.7': '2001:0:4136:e378:8000:63bf:f5ff:fff8',
      '169.254.169.254': '2001:0:4136:e378:8000:63bf:5601:5601',
      '8.8.8.8': '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    },
  ],
];

describe.each(FORMS)('an IPv6 address of the %s form', (_name, form, of) => {
  it('is read as the IPv4 address it embeds', () => {
    for (const [ipv4, ipv6] of Object.entries(of)) {
      expect({ ipv6, embedded: embeddedIPv4(ipv6) }).toEqual({ ipv6, embedded: { ipv4, form } });
    }
  });

  it('is refused as that address is when private addresses are refused', () => {
    expect(refusalOf(of['127.0.0.1']!, false)).toBe(
      `${of['127.0.0.1']} is ${form} address embedding 127.0.0.1, a loopback address`,
    );
    expect(refusalOf(of['10.0.0.7']!, false)).toBe(
      `${of['10.0.0.7']} is ${form} address embedding 10.0.0.7, a private address`,
    );
    expect(refusalOf(of['169.254.169.254']!, false)).toBe(
      `${of['169.254.169.254']} is ${form} address embedding 169.254.169.254, a cloud metadata address`,
    );
  });

  it('still refuses the metadata address when private addresses are allowed', () => {
    expect(refusalOf(of['169.254.169.254']!, true)).toBe(
      `${of['169.254.169.254']} is ${form} address embedding 169.254.169.254, a cloud metadata address`,
    );
    expect(refusalOf(of['127.0.0.1']!, true)).toBeNull();
    expect(refusalOf(of['10.0.0.7']!, true)).toBeNull();
  });

  it('is no global unicast receiver even when the embedded address is public unicast', () => {
    expect(refusalOf(of['8.8.8.8']!, false)).toMatch(
      /is (not a global unicast address|a special-purpose)/,
    );
    expect(refusalOf(of['8.8.8.8']!, true)).toBeNull();
  });
});

describe('embeddedIPv4', () => {
  it('leaves :: and ::1 to their own IPv6 ranges, refused as before', () => {
    expect(embeddedIPv4('::')).toBeNull();
    expect(embeddedIPv4('::1')).toBeNull();
    expect(refusalOf('::', true)).toBe(':: is an unspecified address');
    expect(refusalOf('::1', false)).toBe('::1 is a loopback address');
  });

  it('finds nothing in ordinary IPv6 or IPv4 addresses', () => {
    for (const address of ['2606:4700::1111', '2001:4860:4860::8888', 'fd00::1', '8.8.8.8']) {
      expect({ address, embedded: embeddedIPv4(address) }).toEqual({ address, embedded: null });
    }
    // The other prefixes are neighbours, not these forms.
    expect(embeddedIPv4('64:ff9b:2::7f00:1')).toBeNull();
    expect(embeddedIPv4('2001:1::7f00:1')).toBeNull();
    expect(embeddedIPv4('2003:7f00:1::')).toBeNull();
  });

  it('reads a 6to4 address whatever its subnet and interface bits', () => {
    expect(embeddedIPv4('2002:c000:204:ffff:1:2:3:4')).toEqual({
      ipv4: '192.0.2.4',
      form: 'a 6to4',
    });
  });
});
