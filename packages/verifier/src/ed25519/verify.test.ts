import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { verifyEd25519 } from './verify.js';
import { encodeBase64url } from '../internal/encoding.js';
import { readVectorJson } from '../testing/vectors.js';

const hex = (s: string) => Buffer.from(s, 'hex');

test('RFC 8032 §7.1: all five vectors verify, raw and base64url keys', () => {
  const file = readVectorJson<{ vectors: { name: string; public_key: string; message: string; signature: string }[] }>(
    'ed25519',
    'rfc8032-7.1.json',
  );
  assert.equal(file.vectors.length, 5);
  for (const v of file.vectors) {
    const pk = hex(v.public_key),
      msg = hex(v.message),
      sig = hex(v.signature);
    assert.equal(verifyEd25519(pk, msg, sig), true, v.name);
    assert.equal(verifyEd25519(encodeBase64url(pk), msg, sig), true, v.name);
    const flipped = Buffer.from(sig);
    flipped[0]! ^= 1;
    assert.equal(verifyEd25519(pk, msg, flipped), false, v.name);
  }
});

test('Wycheproof ed25519_test.json: 151 tests, valid verify and invalid do not', () => {
  type Group = { publicKey: { pk: string }; tests: { tcId: number; msg: string; sig: string; result: string }[] };
  const file = readVectorJson<{ testGroups: Group[] }>('ed25519', 'wycheproof', 'ed25519_test.json');
  let total = 0,
    valid = 0;
  for (const group of file.testGroups) {
    for (const t of group.tests) {
      total++;
      const ok = verifyEd25519(hex(group.publicKey.pk), hex(t.msg), hex(t.sig));
      assert.equal(ok, t.result === 'valid', `tcId ${t.tcId}`);
      if (ok) valid++;
    }
  }
  assert.equal(total, 151);
  assert.equal(valid, 88);
});

test('C2SP CCTV: exactly 208 of 914 verify (ref10 rule), and those are the ones it predicts', () => {
  const vectors = readVectorJson<{ number: number; key: string; sig: string; msg: string; flags: string[] | null }[]>(
    'ed25519',
    'cctv',
    'ed25519vectors.json',
  );
  assert.equal(vectors.length, 914);
  let accepted = 0;
  for (const v of vectors) {
    const ok = verifyEd25519(hex(v.key), Buffer.from(v.msg, 'utf8'), hex(v.sig));
    const flags = v.flags ?? [];
    const ref10 = !flags.includes('non_canonical_R') && !flags.includes('low_order_residue');
    assert.equal(ok, ref10, `vector ${v.number}`);
    if (ok) accepted++;
  }
  assert.equal(accepted, 208);
});

test('malformed inputs give false, never throw', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  const msg = Buffer.from('m');
  const sig = sign(null, msg, privateKey);
  assert.equal(verifyEd25519(x, msg, sig), true);
  assert.equal(verifyEd25519(x + '=', msg, sig), false, 'padding');
  assert.equal(verifyEd25519(x.slice(1), msg, sig), false, 'short key');
  assert.equal(verifyEd25519(x.slice(0, 42) + '!', msg, sig), false, 'alphabet');
  assert.equal(verifyEd25519(Buffer.from(x, 'base64url').subarray(1), msg, sig), false);
  assert.equal(verifyEd25519(x, msg, sig.subarray(1)), false);
  assert.equal(verifyEd25519(x, msg, Buffer.concat([sig, Buffer.alloc(1)])), false);
  assert.equal(verifyEd25519('', msg, sig), false);
  // Non-canonical base64url: the last character's unused low bits set.
  const last = x.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const sibling = alphabet[(alphabet.indexOf(last) & ~3) | ((alphabet.indexOf(last) + 1) & 3)]!;
  assert.equal(verifyEd25519(x.slice(0, 42) + sibling, msg, sig), false);
  for (const junk of [null, undefined, 42, {}, [], 'x']) {
    assert.equal(verifyEd25519(junk as never, msg, sig), false);
    assert.equal(verifyEd25519(x, junk as never, sig), false);
    assert.equal(verifyEd25519(x, msg, junk as never), false);
  }
});
