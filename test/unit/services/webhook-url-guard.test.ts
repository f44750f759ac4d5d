import { describe, expect, it } from '@jest/globals';
import {
  checkWebhookUrl,
  refusalOf,
  type ResolveHost,
} from '../../../src/services/webhook-url-guard.js';

const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
  'localhost.example.com': ['127.0.0.1'],
  'mapped.example.com': ['::ffff:169.254.169.254'],
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
    ['https://[64:ff9b::7f00:1]/', 'is a special-purpose (rfc6052) address'],
    ['https://[2002:7f00:1::]/', 'is a special-purpose (6to4) address'],
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
