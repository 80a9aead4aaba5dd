import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Stripe from 'stripe';
import { vectorsDir } from '../../../test/support/vectors.js';
import { newId } from '../../lib/ids.js';
import { serializeEnvelope } from '../../events/envelope.js';
import {
  DEFAULT_TOLERANCE_SECONDS,
  generateEndpointSecret,
  signPayload,
  signatureHeader,
  verifySignatureHeader,
  type VerificationFailure,
} from './signature.js';

interface Vector {
  name: string;
  secret: string;
  timestamp: number;
  payload: string;
  payload_sha256: string;
  payload_length_bytes: number;
  signed_payload: string;
  expected_v1: string;
  header: string;
  verify: { secret: string; now: number; tolerance_s: number; expected_valid: boolean; reason: string };
}

// Self-computed vectors cross-checked with stripe-node 23.1.0; see shared/vectors/README.md, webhooks/.
const vectors = (
  JSON.parse(readFileSync(join(vectorsDir(import.meta.url), 'webhooks', 'stripe-signature-vectors.json'), 'utf8')) as {
    vectors: Vector[];
  }
).vectors;

/**
 * Where the spec's reference verifier and the official SDKs part ways. The vector file records SDK
 * verdicts and marks them "SDK behavior" in `reason`; each such vector must appear here with the
 * spec's verdict, so a new SDK-only vector cannot slip through unexamined.
 * - Uppercase hex and ` v1` after a space: the spec agrees with the SDKs (refused).
 * - A timestamp 3600 s in the future: the SDKs accept it (they only refuse `now - t > tolerance`);
 *   the spec refuses a timestamp more than 300 s from now in either direction.
 */
const SPEC_VERDICT_FOR_SDK_BEHAVIOUR: Record<string, { valid: boolean; reason?: VerificationFailure }> = {
  'uppercase-hex': { valid: false, reason: 'signature_mismatch' },
  'space-after-comma': { valid: false, reason: 'no_signatures' },
  'timestamp-in-future': { valid: false, reason: 'timestamp_outside_tolerance' },
};

/** The failure reason the verifier must give for each negative vector. */
const EXPECTED_REASON: Record<string, VerificationFailure> = {
  'only-v0-scheme': 'no_signatures',
  'wrong-secret': 'signature_mismatch',
  'tampered-body': 'signature_mismatch',
  'timestamp-changed': 'signature_mismatch',
  'age-exceeds-tolerance': 'timestamp_outside_tolerance',
};

test('the vector file holds the 18 vectors its README announces', () => {
  assert.equal(vectors.length, 18);
});

for (const v of vectors) {
  test(`vector ${v.name}: signPayload reproduces expected_v1 over the exact bytes`, () => {
    const bytes = Buffer.from(v.payload, 'utf8');
    assert.equal(bytes.length, v.payload_length_bytes);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), v.payload_sha256);
    assert.equal(v.signed_payload, `${v.timestamp}.${v.payload}`);
    assert.equal(signPayload(v.secret, v.timestamp, v.payload), v.expected_v1);
    assert.equal(signPayload(v.secret, v.timestamp, bytes), v.expected_v1, 'a Buffer body signs the same bytes');
  });

  test(`vector ${v.name}: verifier verdict`, () => {
    const result = verifySignatureHeader(v.header, v.payload, v.verify.secret, {
      now: v.verify.now,
      toleranceSeconds: v.verify.tolerance_s,
    });
    const sdkOnly = v.verify.reason.includes('SDK behavior');
    const override = SPEC_VERDICT_FOR_SDK_BEHAVIOUR[v.name];
    assert.equal(sdkOnly, override !== undefined, 'every SDK-behaviour vector has an explicit spec verdict');
    if (override !== undefined) {
      assert.equal(result.valid, override.valid);
      if (!result.valid) assert.equal(result.reason, override.reason);
      return;
    }
    assert.equal(result.valid, v.verify.expected_valid, v.verify.reason);
    if (!result.valid) assert.equal(result.reason, EXPECTED_REASON[v.name]);
  });
}

test('signatureHeader reproduces the single-secret vector headers', () => {
  for (const v of vectors.filter((x) => x.verify.expected_valid && x.header === `t=${x.timestamp},v1=${x.expected_v1}`)) {
    assert.equal(signatureHeader([v.secret], v.timestamp, v.payload), v.header, v.name);
  }
});

test('signatureHeader emits one v1 per secret, in the order given (rotation: new then old)', () => {
  const rolled = vectors.find((v) => v.name === 'rolled-secret-two-v1-old');
  assert.ok(rolled);
  assert.equal(signatureHeader(['whsec_old_secret', 'whsec_new_secret'], rolled.timestamp, rolled.payload), rolled.header);
  const header = signatureHeader(['whsec_new', 'whsec_old'], 1700000000, '{}');
  assert.equal(header, `t=1700000000,v1=${signPayload('whsec_new', 1700000000, '{}')},v1=${signPayload('whsec_old', 1700000000, '{}')}`);
  for (const secret of ['whsec_new', 'whsec_old']) {
    assert.deepEqual(verifySignatureHeader(header, '{}', secret, { now: 1700000000 }), { valid: true });
  }
  assert.deepEqual(verifySignatureHeader(header, '{}', 'whsec_other', { now: 1700000000 }), {
    valid: false,
    reason: 'signature_mismatch',
  });
});

test('the tolerance is 300 s by default and applies in both directions, bounds included', () => {
  const t = 1700000000;
  const body = '{"id":"evt_x"}';
  const header = signatureHeader(['whsec_s'], t, body);
  const at = (now: number) => verifySignatureHeader(header, body, 'whsec_s', { now });
  assert.equal(DEFAULT_TOLERANCE_SECONDS, 300);
  assert.deepEqual(at(t), { valid: true });
  assert.deepEqual(at(t + 300), { valid: true });
  assert.deepEqual(at(t - 300), { valid: true });
  assert.deepEqual(at(t + 301), { valid: false, reason: 'timestamp_outside_tolerance' });
  assert.deepEqual(at(t - 301), { valid: false, reason: 'timestamp_outside_tolerance' });
  assert.deepEqual(verifySignatureHeader(header, body, 'whsec_s', { now: t + 10, toleranceSeconds: 5 }), {
    valid: false,
    reason: 'timestamp_outside_tolerance',
  });
  assert.throws(() => verifySignatureHeader(header, body, 'whsec_s', { toleranceSeconds: -1 }), RangeError);
});

test('a forged header is reported as a mismatch even when its timestamp is also stale', () => {
  const header = `t=1000,v1=${'0'.repeat(64)}`;
  assert.deepEqual(verifySignatureHeader(header, '{}', 'whsec_s', { now: 1700000000 }), {
    valid: false,
    reason: 'signature_mismatch',
  });
});

test('without options the verifier uses the current time', () => {
  const now = Math.floor(Date.now() / 1000);
  assert.deepEqual(verifySignatureHeader(signatureHeader(['whsec_s'], now, 'x'), 'x', 'whsec_s'), { valid: true });
  assert.equal(verifySignatureHeader(signatureHeader(['whsec_s'], now - 3600, 'x'), 'x', 'whsec_s').valid, false);
});

test('header parsing: malformed headers, non-numeric t, missing v1', () => {
  const sig = signPayload('whsec_s', 1700000000, 'b');
  const check = (header: string) => verifySignatureHeader(header, 'b', 'whsec_s', { now: 1700000000 });
  const cases: [string, VerificationFailure][] = [
    ['', 'malformed_header'],
    ['garbage', 'malformed_header'],
    [`v1=${sig}`, 'malformed_header'], // no t
    [`t=1700000000,t=1700000000,v1=${sig}`, 'malformed_header'], // repeated t: which one was signed?
    [`t=1700000000,v1=${sig},`, 'malformed_header'], // empty element
    [`t=1700000000,v1`, 'malformed_header'],
    [`T=1700000000,v1=${sig}`, 'malformed_header'], // keys are case-sensitive
    [`t=,v1=${sig}`, 'timestamp_not_numeric'],
    [`t=abc,v1=${sig}`, 'timestamp_not_numeric'],
    [`t=1700000000abc,v1=${sig}`, 'timestamp_not_numeric'], // parseInt would read 1700000000
    [`t=-1700000000,v1=${sig}`, 'timestamp_not_numeric'],
    [`t=+1700000000,v1=${sig}`, 'timestamp_not_numeric'],
    [`t=1700000000.0,v1=${sig}`, 'timestamp_not_numeric'],
    [`t=1.7e9,v1=${sig}`, 'timestamp_not_numeric'],
    [`t= 1700000000,v1=${sig}`, 'timestamp_not_numeric'], // no trimming
    [`t=1700000000 ,v1=${sig}`, 'timestamp_not_numeric'],
    [`t=99999999999999999999,v1=${sig}`, 'timestamp_not_numeric'], // beyond exact integers
    ['t=1700000000', 'no_signatures'],
    [`t=1700000000,v0=${sig}`, 'no_signatures'],
    [`t=1700000000,V1=${sig}`, 'no_signatures'],
    [`t=1700000000,v1 =${sig}`, 'no_signatures'],
    [`t=1700000000,v1= ${sig}`, 'signature_mismatch'], // value is not trimmed either
    [`t=1700000000,v1=${sig}=`, 'signature_mismatch'], // split on the first '=' only
    [`t=1700000000,v1=${sig.slice(0, 63)}`, 'signature_mismatch'], // shorter: compared without throwing
    [`t=1700000000,v1=${sig}00`, 'signature_mismatch'],
    [`t=1700000000,v1=`, 'signature_mismatch'],
  ];
  for (const [header, reason] of cases) {
    assert.deepEqual(check(header), { valid: false, reason }, header);
  }
  // Order of elements and unknown schemes do not matter; any matching v1 wins.
  assert.deepEqual(check(`v1=${'f'.repeat(64)},v9=x,v1=${sig},t=1700000000`), { valid: true });
  assert.deepEqual(check(`t=1700000000,v1=${sig},v1=${'f'.repeat(64)}`), { valid: true });
});

test('the signature covers the exact bytes: one changed byte, a re-serialised body, another t', () => {
  const body = '{"id":"evt_1","data":{"name":"Café €"}}';
  const header = signatureHeader(['whsec_s'], 1700000000, body);
  const opts = { now: 1700000000 };
  assert.deepEqual(verifySignatureHeader(header, Buffer.from(body, 'utf8'), 'whsec_s', opts), { valid: true });
  const flipped = Buffer.from(body, 'utf8');
  flipped[5] = (flipped[5] as number) ^ 0x01;
  assert.equal(verifySignatureHeader(header, flipped, 'whsec_s', opts).valid, false);
  assert.equal(verifySignatureHeader(header, JSON.stringify(JSON.parse(body), null, 1), 'whsec_s', opts).valid, false);
  assert.equal(verifySignatureHeader(header, `${body}\n`, 'whsec_s', opts).valid, false);
  assert.notEqual(signPayload('whsec_s', 1700000001, body), signPayload('whsec_s', 1700000000, body));
});

test('signing refuses timestamps that would not survive verification', () => {
  for (const t of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    assert.throws(() => signPayload('whsec_s', t, 'x'), RangeError, String(t));
    assert.throws(() => signatureHeader(['whsec_s'], t, 'x'), RangeError, String(t));
  }
  assert.throws(() => signatureHeader([], 1700000000, 'x'), RangeError);
});

test('generateEndpointSecret: whsec_ + base64url of 32 random bytes, unique', () => {
  const secrets = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const secret = generateEndpointSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64url').length, 32);
    secrets.add(secret);
  }
  assert.equal(secrets.size, 200);
});

// ----- Interoperability with the official Stripe SDK (a receiver's view) ----------------------------

function sampleBody(): string {
  return serializeEnvelope({
    id: newId('event'),
    type: 'webhook.test',
    created_at: new Date().toISOString(),
    data: { message: 'Café € 😀', endpoint_id: newId('webhookEndpoint') },
    livemode: false,
  });
}

const stripe = new Stripe('sk_test_x');

test('stripe-node accepts our headers (one secret, and two during rotation) at the current time', () => {
  const body = sampleBody();
  const now = Math.floor(Date.now() / 1000);
  const secret = generateEndpointSecret();
  const event = stripe.webhooks.constructEvent(body, signatureHeader([secret], now, body), secret);
  assert.equal(event.id, (JSON.parse(body) as { id: string }).id);
  const [next, previous] = [generateEndpointSecret(), generateEndpointSecret()];
  const rotated = signatureHeader([next, previous], now, body);
  for (const s of [next, previous]) {
    assert.ok(stripe.webhooks.constructEvent(body, rotated, s));
    assert.ok(stripe.webhooks.constructEvent(Buffer.from(body, 'utf8'), rotated, s));
  }
  assert.throws(
    () => stripe.webhooks.constructEvent(body, rotated, generateEndpointSecret()),
    Stripe.errors.StripeSignatureVerificationError,
  );
});

test('stripe-node rejects our header once the body changes by one byte', () => {
  const body = sampleBody();
  const secret = generateEndpointSecret();
  const header = signatureHeader([secret, generateEndpointSecret()], Math.floor(Date.now() / 1000), body);
  const bytes = Buffer.from(body, 'utf8');
  for (const index of [0, bytes.length >> 1, bytes.length - 1]) {
    const changed = Buffer.from(bytes);
    changed[index] = (changed[index] as number) ^ 0x20;
    assert.throws(() => stripe.webhooks.constructEvent(changed, header, secret), Stripe.errors.StripeSignatureVerificationError);
    assert.equal(verifySignatureHeader(header, changed, secret).valid, false);
  }
});

test('stripe-node and this verifier agree on headers, and differ only on future timestamps', () => {
  const body = sampleBody();
  const secret = generateEndpointSecret();
  const now = Math.floor(Date.now() / 1000);
  // Same header text as the SDK's own test helper.
  assert.equal(stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: now }), signatureHeader([secret], now, body));
  // Old by more than 300 s: both refuse.
  const stale = signatureHeader([secret], now - 400, body);
  assert.throws(() => stripe.webhooks.constructEvent(body, stale, secret), Stripe.errors.StripeSignatureVerificationError);
  assert.deepEqual(verifySignatureHeader(stale, body, secret, { now }), { valid: false, reason: 'timestamp_outside_tolerance' });
  // Ahead by more than 300 s: the SDK accepts (it checks age only); the spec's verifier refuses.
  const early = signatureHeader([secret], now + 3600, body);
  assert.ok(stripe.webhooks.constructEvent(body, early, secret));
  assert.deepEqual(verifySignatureHeader(early, body, secret, { now }), { valid: false, reason: 'timestamp_outside_tolerance' });
});
