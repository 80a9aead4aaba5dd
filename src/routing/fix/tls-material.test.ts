import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestPki } from '../../../test/support/certificates.js';
import { mergeTlsMaterial, summariseTlsMaterial, tlsOptions, TlsMaterialError } from './tls-material.js';

const pki = new TestPki();
const ca = pki.authority('Unit CA');
const client = pki.leaf('unit-client', 'CAURI', ca, { client: true });
const other = pki.leaf('unit-other', 'OTHER', ca, { client: true });

test('a client certificate needs its own unencrypted key; certificates must be PEM', () => {
  const now = Date.now();
  const refused = (input: Parameters<typeof mergeTlsMaterial>[1], message: RegExp) =>
    assert.throws(
      () => mergeTlsMaterial(null, input, now),
      (e: unknown) => e instanceof TlsMaterialError && message.test(e.message),
    );
  refused({ cert: client.cert }, /give both --cert and --key/);
  refused({ key: client.key }, /give both --cert and --key/);
  refused({ cert: client.cert, key: other.key }, /does not belong to the certificate CN=CAURI/);
  const encrypted = join(pki.dir, 'unit-encrypted.key');
  execFileSync('openssl', ['pkey', '-in', client.keyPath, '-aes256', '-passout', 'pass:secret', '-out', encrypted], { stdio: 'pipe' });
  refused({ cert: client.cert, key: readFileSync(encrypted, 'utf8') }, /private key is encrypted/);
  refused({ cert: 'hello', key: client.key }, /cert: no PEM certificate/);
  refused({ cert: client.cert, key: 'not a key' }, /key: not a PEM private key/);
  refused({ ca: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }, /ca: certificate 1 does not parse/);
});

test('certificates outside their validity are refused (on the date given: two days of validity are over in three)', () => {
  const inThreeDays = Date.now() + 3 * 86_400_000;
  assert.throws(() => mergeTlsMaterial(null, { ca: ca.cert }, inThreeDays), /ca: CN=Unit CA expired on/);
  assert.throws(
    () => mergeTlsMaterial(null, { cert: client.cert, key: client.key }, Date.now() - 86_400_000),
    /cert: CN=CAURI is not valid before/,
  );
});

test('parts given replace their stored value, the rest is kept; the options carry the material in memory', () => {
  const first = mergeTlsMaterial(null, { cert: client.cert, key: client.key }, Date.now());
  assert.deepEqual(tlsOptions(first), { cert: first.client_cert, key: first.client_key });
  const second = mergeTlsMaterial(first, { ca: ca.cert }, Date.now());
  assert.equal(second.client_cert, first.client_cert);
  assert.deepEqual(tlsOptions(second), { cert: first.client_cert, key: first.client_key, ca: ca.cert.trim() + '\n' });
  const summary = summariseTlsMaterial(second);
  assert.equal(summary.client_cert?.subject, 'CN=CAURI');
  assert.equal(summary.client_cert?.issuer, 'CN=Unit CA');
  assert.deepEqual(
    summary.ca?.map((c) => c.subject),
    ['CN=Unit CA'],
  );
  assert.deepEqual(tlsOptions(null), {});
  assert.deepEqual(summariseTlsMaterial(null), { client_cert: null, ca: null });
});
