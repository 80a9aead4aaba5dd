import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { SignJWT, decodeProtectedHeader } from 'jose';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { ManualClock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import type { ClientId } from '../lib/ids.js';
import { KeyRing } from '../keys/key-ring.js';
import { TokenService } from './token.service.js';

const options = { issuer: 'http://127.0.0.1:8080', audience: 'http://127.0.0.1:8080/v1', livemode: false };
const isUnauthorized = (e: unknown) => e instanceof ApiError && e.code === 'unauthorized' && e.status === 401;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function setup(t: import('node:test').TestContext) {
  const storage = await openTestStorage(t, DATABASES[0]!);
  const clock = new ManualClock();
  const keys = new KeyRing(storage.db, storage.dialect, randomBytes(32), clock);
  return { clock, keys, tokens: new TokenService(keys, options, clock) };
}

test('an issued token verifies, carries the documented claims (docs/concepts.md) and expires after 900 s', async (t) => {
  const { clock, tokens, keys } = await setup(t);
  const token = await tokens.issue('cli_a' as ClientId, ['orders:read', 'kyc:read']);
  const header = decodeProtectedHeader(token);
  assert.deepEqual(header, { alg: 'EdDSA', kid: (await keys.current('token')).id, typ: 'at+jwt' });
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
  assert.deepEqual(Object.keys(claims).sort(), ['aud', 'exp', 'iat', 'iss', 'jti', 'livemode', 'scope', 'sub']);
  assert.equal(claims.exp - claims.iat, 900);
  assert.equal(claims.iat, Math.floor(clock.now().getTime() / 1000));
  assert.deepEqual(
    [claims.iss, claims.aud, claims.sub, claims.scope, claims.livemode],
    [options.issuer, options.audience, 'cli_a', 'orders:read kyc:read', false],
  );
  assert.match(claims.jti, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  // Values that need escaping in JSON come back exactly.
  const odd = { issuer: 'ca"u\\ri\u2028', audience: 'https://api.example/\u00e9', livemode: true };
  const oddClaims = JSON.parse(
    Buffer.from((await new TokenService(keys, odd, clock).issue('cli_a' as ClientId, [])).split('.')[1] ?? '', 'base64url').toString(),
  );
  assert.deepEqual([oddClaims.iss, oddClaims.aud, oddClaims.livemode, oddClaims.scope], [odd.issuer, odd.audience, true, '']);
  const grant = await tokens.verify(token);
  assert.equal(grant.clientId, 'cli_a');
  assert.deepEqual([...grant.scopes], ['orders:read', 'kyc:read']);
  clock.advance(899_000);
  await tokens.verify(token);
  clock.advance(1_000);
  await assert.rejects(tokens.verify(token), isUnauthorized, 'expired (cached)');
  await assert.rejects(new TokenService(keys, options, clock).verify(token), isUnauthorized, 'expired (fresh verifier)');
});

test('forged, tampered and foreign tokens are refused', async (t) => {
  const { tokens, keys, clock } = await setup(t);
  const good = await tokens.issue('cli_a' as ClientId, ['orders:read']);
  const [h, p, s] = good.split('.') as [string, string, string];
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
  const key = await keys.current('token');
  const now = Math.floor(clock.now().getTime() / 1000);

  const forged: [string, string][] = [
    ['tampered payload', `${h}.${b64({ ...payload, scope: 'orders:read orders:write' })}.${s}`],
    ['tampered signature', `${h}.${p}.${s.slice(0, -4)}AAAA`],
    ['alg none', `${b64({ alg: 'none', typ: 'at+jwt', kid: key.id })}.${p}.`],
    ['not a JWT', 'abc'],
  ];
  // HS256 "signed" with the public key, the classic algorithm-confusion attack.
  const hsHeader = b64({ alg: 'HS256', typ: 'at+jwt', kid: key.id });
  const hsSig = createHmac('sha256', Buffer.from(key.publicKey, 'base64url')).update(`${hsHeader}.${p}`).digest('base64url');
  forged.push(['HS256 with the public key', `${hsHeader}.${p}.${hsSig}`]);
  const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'EdDSA', kid: key.id, typ: 'at+jwt' }) =>
    new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key.privateKeyObject);
  const base = {
    iss: options.issuer,
    aud: options.audience,
    sub: 'cli_a',
    scope: 'orders:read',
    iat: now,
    exp: now + 900,
    jti: 'x',
    livemode: false,
  };
  forged.push(['wrong aud', await sign({ ...base, aud: 'https://elsewhere' })]);
  forged.push(['wrong iss', await sign({ ...base, iss: 'https://elsewhere' })]);
  forged.push(['livemode token in sandbox', await sign({ ...base, livemode: true })]);
  forged.push(['unknown kid', await sign(base, { alg: 'EdDSA', kid: 'key_unknown', typ: 'at+jwt' })]);
  forged.push(['no kid', await sign(base, { alg: 'EdDSA', typ: 'at+jwt' })]);
  forged.push(['wrong typ', await sign(base, { alg: 'EdDSA', kid: key.id, typ: 'JWT' })]);
  forged.push(['expired', await sign({ ...base, iat: now - 1000, exp: now - 100 })]);
  const rotated = await keys.rotate('attestation');
  forged.push([
    'signed by an attestation key',
    await new SignJWT(base)
      .setProtectedHeader({ alg: 'EdDSA', kid: rotated.current.id, typ: 'at+jwt' })
      .sign(rotated.current.privateKeyObject),
  ]);

  for (const [name, token] of forged) await assert.rejects(tokens.verify(token), isUnauthorized, name);
  assert.equal((await tokens.verify(good)).clientId, 'cli_a');
});

test('tokens signed before a rotation still verify; new ones use the new key within 5 seconds', async (t) => {
  const { tokens, keys, clock } = await setup(t);
  const before = await tokens.issue('cli_a' as ClientId, ['orders:read']);
  const { previous, current } = await keys.rotate('token');
  assert.equal(previous?.validUntil, current.validFrom, 'windows are consecutive');
  clock.advance(5000);
  const after = await tokens.issue('cli_a' as ClientId, ['orders:read']);
  assert.equal(decodeProtectedHeader(after).kid, current.id);
  await tokens.verify(before);
  await tokens.verify(after);
});

test('a token issued after its key planned end is signed by the next key, even within the 5 seconds the key is kept', async (t) => {
  const { tokens, keys, clock } = await setup(t);
  const first = await keys.current('token');
  // 2 s before the key's planned end (no worker rotated it a day before): a token, which keeps the key.
  clock.set(new Date(KeyRing.windowEnd(first) - 2000));
  assert.equal(decodeProtectedHeader(await tokens.issue('cli_a' as ClientId, [])).kid, first.id);
  // 1 s after it: the kept key no longer covers the instant; the next one signs.
  clock.advance(3000);
  const after = await tokens.issue('cli_a' as ClientId, []);
  const kid = decodeProtectedHeader(after).kid;
  assert.notEqual(kid, first.id);
  const next = await keys.current('token');
  assert.equal(kid, next.id);
  assert.ok(next.validFrom <= clock.now().getTime() && clock.now().getTime() < KeyRing.windowEnd(next));
  await tokens.verify(after);
});
