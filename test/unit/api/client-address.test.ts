import { describe, expect, it } from '@jest/globals';
import { clientAddress } from '../../../src/api/client-address.js';

describe('clientAddress', () => {
  it('keeps IPv4 addresses whole, also when mapped into IPv6', () => {
    expect(clientAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts IPv6 clients per /64, whatever the spelling', () => {
    const a = clientAddress('2001:db8:abcd:12:1:2:3:4');
    expect(a).toBe('2001:db8:abcd:12::/64');
    expect(clientAddress('2001:0db8:abcd:0012:ffff:ffff:ffff:ffff')).toBe(a);
    expect(clientAddress('2001:db8:abcd:12::9')).toBe(a);
    expect(clientAddress('2001:db8:abcd:13::9')).not.toBe(a);
    expect(clientAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddress('::1')).toBe('0:0:0:0::/64');
    expect(clientAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientAddress('64:ff9b::198.51.100.1')).toBe('64:ff9b:0:0::/64');
  });

  it('names a missing address', () => {
    expect(clientAddress(undefined)).toBe('unknown');
  });
});
