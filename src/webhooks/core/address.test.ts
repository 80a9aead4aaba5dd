import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_URL_LENGTH, checkEndpointUrl, isPublicAddress, type UrlRule } from './address.js';

function refused(url: string, mode: 'sandbox' | 'production', rule: UrlRule, options?: { allowPrivateInSandbox?: boolean }): void {
  const result = checkEndpointUrl(url, mode, options);
  assert.equal(result.ok, false, `${mode} ${url} should be refused (${rule})`);
  if (!result.ok) {
    assert.equal(result.rule, rule, `${mode} ${url}`);
    assert.ok(result.message.length > 0);
  }
}

function accepted(url: string, mode: 'sandbox' | 'production', options?: { allowPrivateInSandbox?: boolean }): void {
  assert.deepEqual(checkEndpointUrl(url, mode, options), { ok: true }, `${mode} ${url} should be accepted`);
}

test('ordinary public endpoints are accepted in both modes', () => {
  for (const url of [
    'https://example.com/webhooks',
    'https://hooks.example.co.uk:8443/cauri?tenant=1',
    'https://EXAMPLE.com/Path#frag',
    'https://93.184.215.14/hook',
    'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook',
    'https://xn--bcher-kva.example/hook',
    'https://bücher.example/hook',
  ]) {
    accepted(url, 'production');
    accepted(url, 'sandbox');
    accepted(url, 'sandbox', { allowPrivateInSandbox: false });
  }
});

test('format: only absolute URLs, written scheme://host, without invisible characters', () => {
  for (const url of [
    '',
    'example.com/hook',
    '/webhooks',
    '//example.com/hook',
    'https://',
    'https:example.com',
    'https:/example.com',
    'https://exa mple.com/',
    ' https://example.com/',
    'https://example.com/\n',
    'https://example.com/\thook',
    'https://example.com/\u00a0',
    'https://[::1/',
    'https://exa%mple.com/',
    'https://example.com:99999/',
  ]) {
    refused(url, 'production', 'format');
    refused(url, 'sandbox', 'format');
  }
});

test('scheme: http and https only', () => {
  for (const url of [
    'ftp://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'ws://example.com/',
    'data:text/plain,x',
    'gopher://example.com/',
  ]) {
    refused(url, 'sandbox', 'scheme');
    refused(url, 'production', 'scheme');
  }
});

test('https_required: plain http only in sandbox', () => {
  refused('http://example.com/hook', 'production', 'https_required');
  refused('HTTP://example.com/hook', 'production', 'https_required');
  accepted('http://example.com/hook', 'sandbox');
  accepted('HTTPS://example.com/hook', 'production');
});

test('max_length: 2048 characters at most', () => {
  const base = 'https://example.com/';
  const exact = base + 'a'.repeat(MAX_URL_LENGTH - base.length);
  assert.equal(exact.length, 2048);
  accepted(exact, 'production');
  refused(`${exact}a`, 'production', 'max_length');
  refused(`${exact}a`, 'sandbox', 'max_length');
  refused(`not a url ${'x'.repeat(5000)}`, 'sandbox', 'max_length');
});

test('credentials: no user name or password in the URL', () => {
  for (const url of [
    'https://user:pass@example.com/',
    'https://user@example.com/',
    'https://:pass@example.com/',
    'https://@example.com/',
    'https://a%40b@example.com/',
  ]) {
    refused(url, 'production', 'credentials');
    refused(url, 'sandbox', 'credentials');
  }
  accepted('https://example.com/path@x?q=a@b#c@d', 'production');
});

const PRIVATE_HOST_URLS = [
  'https://127.0.0.1/',
  'https://127.1.2.3:8443/hook',
  'https://10.0.0.1/',
  'https://172.16.0.1/',
  'https://172.31.255.255/',
  'https://192.168.1.10/',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/',
  'https://100.127.255.254/',
  'https://0.0.0.0/',
  'https://0/', // 0.0.0.0 after WHATWG normalisation
  'https://2130706433/', // 127.0.0.1 in decimal
  'https://0x7f.1/', // 127.0.0.1 in hex shorthand
  'https://0177.0.0.1/', // 127.0.0.1 in octal
  'https://127.0.0.1./',
  'https://224.0.0.1/',
  'https://255.255.255.255/',
  'https://192.0.2.10/',
  'https://[::1]/',
  'https://[::]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:10.0.0.1]/',
  'https://[::ffff:a9fe:a9fe]/', // ::ffff:169.254.169.254
  'https://[64:ff9b::a9fe:a9fe]/', // NAT64 of 169.254.169.254
  'https://[2002:7f00:1::]/', // 6to4 of 127.0.0.1
  'https://[fc00::1]/',
  'https://[fd12:3456:789a::1]/',
  'https://[fe80::1]/',
  'https://[febf:ffff::1]/',
  'https://[ff02::1]/',
  'https://[2001:db8::1]/',
  'https://localhost/',
  'https://LOCALHOST:3000/hook',
  'https://localhost./',
  'https://api.localhost/',
  'https://a.b.localhost/',
  'https://%6c%6fcalhost/', // percent-encoded "lo"
];

test('private_address: literal non-public hosts and localhost are refused in production', () => {
  for (const url of PRIVATE_HOST_URLS) refused(url, 'production', 'private_address');
});

test('private_address: sandbox accepts them by default and refuses them when configured to', () => {
  for (const url of PRIVATE_HOST_URLS) {
    accepted(url, 'sandbox');
    accepted(url, 'sandbox', { allowPrivateInSandbox: true });
    refused(url, 'sandbox', 'private_address', { allowPrivateInSandbox: false });
  }
  accepted('http://localhost:3000/webhooks', 'sandbox');
  accepted('http://127.0.0.1:8080/hook', 'sandbox');
  // Names that merely look local are resolved and checked at delivery time.
  accepted('https://localhost.example.com/', 'production');
  accepted('https://mylocalhost/', 'production');
  accepted('https://intranet/', 'production');
});

test('rules apply in a fixed order: length, format, scheme, https, credentials, address', () => {
  refused('http://user:pw@127.0.0.1/', 'production', 'https_required');
  refused('https://user:pw@127.0.0.1/', 'production', 'credentials');
  refused('ftp://127.0.0.1/', 'production', 'scheme');
  refused(`http://127.0.0.1/${'a'.repeat(3000)}`, 'production', 'max_length');
});

test('isPublicAddress: IPv4 special-purpose ranges, with their edges', () => {
  const notPublic = [
    '0.0.0.0',
    '0.255.255.255',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.0',
    '100.127.255.255',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.0.1',
    '169.254.169.254',
    '172.16.0.0',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.88.99.1',
    '192.168.0.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.251',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
  ];
  const publicOnes = [
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '41.202.219.1',
    '196.200.1.1',
  ];
  for (const ip of notPublic) assert.equal(isPublicAddress(ip), false, ip);
  for (const ip of publicOnes) assert.equal(isPublicAddress(ip), true, ip);
});

test('isPublicAddress: IPv6, including forms that embed an IPv4 address', () => {
  const notPublic = [
    '::',
    '::1',
    '::127.0.0.1', // deprecated IPv4-compatible
    '::8.8.8.8',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:0.0.0.0',
    '0:0:0:0:0:ffff:c0a8:0101',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a00:1',
    '64:ff9b:1::1',
    '100::1',
    '2001::1', // Teredo
    '2001:2::1', // benchmarking
    '2001:db8::1',
    '2002:7f00:1::1', // 6to4 of 127.0.0.1
    '2002:a00:1::1', // 6to4 of 10.0.0.1
    '3fff::1',
    '5f00::1',
    'fc00::',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'fe80::1',
    'febf::1',
    'fec0::1',
    'ff02::1',
    'ff0e::1',
    'fe80::1%eth0', // zone: meaningful on a local link only
    '1::', // outside 2000::/3
  ];
  const publicOnes = [
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4007:80e::200e',
    '2001:200::1', // first regular allocation after 2001::/23
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1', // 6to4 of 8.8.8.8
    '3ffe::1',
    '2C0F:F248::1', // uppercase hex (AFRINIC space)
  ];
  for (const ip of notPublic) assert.equal(isPublicAddress(ip), false, ip);
  for (const ip of publicOnes) assert.equal(isPublicAddress(ip), true, ip);
});

test('isPublicAddress fails closed on anything that is not an address', () => {
  for (const value of [
    '',
    'localhost',
    'example.com',
    '[::1]',
    '127.0.0.1 ',
    ' 8.8.8.8',
    '8.8.8',
    '8.8.8.8.8',
    '256.1.1.1',
    '010.0.0.1',
    '0x7f.0.0.1',
    '2130706433',
    ':::',
    'fe80::1%',
  ]) {
    assert.equal(isPublicAddress(value), false, JSON.stringify(value));
  }
});
