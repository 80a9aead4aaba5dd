import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { HmacSha256 } from './crypto.js';

test('HmacSha256: the RFC 4231 test cases 1, 2 and 6 (a key longer than a block)', () => {
  assert.equal(new HmacSha256(Buffer.alloc(20, 0x0b)).digest('Hi There', 'hex'), 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7');
  assert.equal(new HmacSha256(Buffer.from('Jefe')).digest('what do ya want for nothing?', 'hex'), '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
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
    for (const message of ['x'.repeat(64), '', 'sk_test_abc', 'é'.repeat(32), 'é'.repeat(33), 'x'.repeat(65), 'x'.repeat(300), '\u{1F600}'.repeat(10), 'a']) {
      for (const encoding of ['hex', 'base64url'] as const) {
        assert.equal(hmac.digest(message, encoding), createHmac('sha256', key).update(message).digest(encoding), `${keyBytes}-byte key, ${message.length} chars`);
      }
    }
  }
});
