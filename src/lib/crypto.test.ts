import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { HmacSha256, signEd25519 } from './crypto.js';

test('HmacSha256: the RFC 4231 test cases 1, 2 and 6 (a key longer than a block)', () => {
  assert.equal(
    new HmacSha256(Buffer.alloc(20, 0x0b)).digest('Hi There', 'hex'),
    'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
  );
  assert.equal(
    new HmacSha256(Buffer.from('Jefe')).digest('what do ya want for nothing?', 'hex'),
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  );
  assert.equal(
    new HmacSha256(Buffer.alloc(131, 0xaa)).digest('Test Using Larger Than Block-Size Key - Hash Key First', 'hex'),
    '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
  );
});

test('HmacSha256 equals createHmac for every key length, short and long messages, and after longer ones', () => {
  for (const keyBytes of [0, 1, 32, 63, 64, 65, 200]) {
    const key = randomBytes(keyBytes);
    const hmac = new HmacSha256(key, 64);
    // In this order, so that a shorter message follows a longer one in the reused buffer.
    for (const message of [
      'x'.repeat(64),
      '',
      'sk_test_abc',
      'é'.repeat(32),
      'é'.repeat(33),
      'x'.repeat(65),
      'x'.repeat(300),
      '\u{1F600}'.repeat(10),
      'a',
    ]) {
      for (const encoding of ['hex', 'base64url'] as const) {
        assert.equal(
          hmac.digest(message, encoding),
          createHmac('sha256', key).update(message).digest(encoding),
          `${keyBytes}-byte key, ${message.length} chars`,
        );
      }
    }
  }
});

test('signEd25519: signatures asked for together are each right, and a bad key fails only its own', async () => {
  const keys = [generateKeyPairSync('ed25519'), generateKeyPairSync('ed25519')];
  const messages = Array.from({ length: 50 }, (_, i) => Buffer.from(`message ${i}`));
  const results = await Promise.allSettled([
    ...messages.map((m, i) => signEd25519(m, (keys[i % 2] as (typeof keys)[number]).privateKey)),
    signEd25519(Buffer.from('with the public half'), (keys[0] as (typeof keys)[number]).publicKey),
  ]);
  messages.forEach((m, i) => {
    const result = results[i];
    assert.equal(result?.status, 'fulfilled');
    const signature = (result as PromiseFulfilledResult<Buffer>).value;
    assert.equal(signature.length, 64);
    assert.ok(verify(null, m, (keys[i % 2] as (typeof keys)[number]).publicKey, signature), `signature ${i}`);
    assert.ok(!verify(null, m, (keys[(i + 1) % 2] as (typeof keys)[number]).publicKey, signature));
  });
  assert.equal(results[50]?.status, 'rejected', 'a public key cannot sign');
});
