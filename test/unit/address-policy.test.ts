import { describe, it, expect } from 'vitest';
import { isAllowedAddress, policyFor } from '../../src/adapters/net/address-policy.ts';

const publicAddresses = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '151.101.1.69',
  '172.15.255.255', // just below 172.16/12
  '172.32.0.1', // just above 172.16/12
  '100.63.255.255', // just below 100.64/10
  '100.128.0.1', // just above 100.64/10
  '169.253.255.255',
  '11.0.0.1',
  '223.255.255.254',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
];

const refusedAddresses: Record<string, string[]> = {
  private: ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.254', '192.168.0.1', '192.168.255.255'],
  loopback: ['127.0.0.1', '127.0.0.2', '127.255.255.254', '::1'],
  linkLocal: ['169.254.169.254', '169.254.0.1', 'fe80::1', 'febf:ffff::1'],
  uniqueLocal: ['fc00::1', 'fd12:3456:789a::1', 'fdff:ffff::1'],
  unspecified: ['0.0.0.0', '0.1.2.3', '::'],
  carrierGradeNat: ['100.64.0.1', '100.127.255.254'],
  multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1', 'ff05::1:3'],
  broadcast: ['255.255.255.255'],
  reserved: ['192.0.0.1', '192.0.2.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '240.0.0.1', '2001:db8::1'],
  ipv4Mapped: ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:192.168.1.1', '::ffff:0.0.0.0'],
  ipv4Compatible: ['::7f00:1', '::a00:1', '::808:808'],
  tunnelsAndTranslation: ['64:ff9b::7f00:1', '2002:7f00:1::1', '2001::1'],
  siteLocal: ['fec0::1'],
  notAnAddress: ['', 'localhost', 'example.com', '256.1.1.1', '1.2.3', '0x7f.1', '2130706433', '[::1]', '::1%lo', 'fe80::1%eth0'],
};

describe('isAllowedAddress', () => {
  it.each(publicAddresses)('allows public unicast %s', (ip) => {
    expect(isAllowedAddress(ip)).toBe(true);
  });

  for (const [kind, ips] of Object.entries(refusedAddresses)) {
    it.each(ips)(`refuses ${kind} %s`, (ip) => {
      expect(isAllowedAddress(ip)).toBe(false);
    });
  }
});

describe('policyFor', () => {
  it('applies the public-unicast rule unless private networks are allowed', () => {
    expect(policyFor(false)('127.0.0.1')).toBe(false);
    expect(policyFor(false)('8.8.8.8')).toBe(true);
    expect(policyFor(true)('127.0.0.1')).toBe(true);
    expect(policyFor(true)('169.254.169.254')).toBe(true);
  });
});
