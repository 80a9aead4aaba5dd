import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deterministicId, encodeUuid, isId, newId, uuidv7Bytes } from './ids.js';

test('encodes UUIDs as TypeID base32 (vectors from the TypeID specification)', () => {
  const hex = (h: string) => Uint8Array.from(Buffer.from(h.replace(/-/g, ''), 'hex'));
  assert.equal(encodeUuid(hex('00000000-0000-0000-0000-000000000000')), '00000000000000000000000000');
  assert.equal(encodeUuid(hex('00000000-0000-0000-0000-000000000001')), '00000000000000000000000001');
  assert.equal(encodeUuid(hex('ffffffff-ffff-ffff-ffff-ffffffffffff')), '7zzzzzzzzzzzzzzzzzzzzzzzzz');
  assert.equal(encodeUuid(hex('01890a5d-ac96-774b-bcce-b302099a8057')), '01h455vb4pex5vsknk084sn02q');
});

test('new ids carry their prefix, a UUIDv7 and sort in creation order', () => {
  const ids = Array.from({ length: 2000 }, () => newId('order'));
  for (const id of ids) assert.ok(isId('order', id), id);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  const bytes = uuidv7Bytes(Date.UTC(2026, 10, 22));
  assert.equal((bytes[6] as number) >> 4, 7, 'version 7');
  assert.equal((bytes[8] as number) >> 6, 2, 'RFC 9562 variant');
  assert.equal(Buffer.from(bytes.subarray(0, 6)).readUIntBE(0, 6), Date.UTC(2026, 10, 22));
});

test('ids of one millisecond sort in creation order when ids for other times are made in between', () => {
  const t = Date.UTC(2026, 10, 25, 10, 0, 0);
  // An event now, a fill at the partner's earlier (or later) execution time, another event now: 200 times over.
  const now: string[] = [];
  for (let i = 0; i < 200; i++) {
    now.push(newId('event', t));
    newId('fill', t - 3);
    newId('fill', t + 2);
  }
  assert.deepEqual([...now].sort(), now);
  // Past 4,096 ids in one millisecond the next one is borrowed, and later ids of that millisecond follow.
  const many = Array.from({ length: 5000 }, (_, i) => {
    if (i % 2 === 1) newId('fill', t);
    return newId('event', t + 10);
  });
  assert.deepEqual([...many].sort(), many);
  assert.equal(new Set(many).size, many.length);
});

test('isId refuses other kinds and malformed suffixes', () => {
  const id = newId('attestation');
  assert.ok(isId('attestation', id));
  assert.equal(isId('order', id), false);
  assert.equal(isId('attestation', id.toUpperCase()), false);
  assert.equal(isId('attestation', `${id}0`), false);
  assert.equal(isId('attestation', 'att_8zzzzzzzzzzzzzzzzzzzzzzzzz'), false, 'first digit above 7 overflows 128 bits');
  assert.equal(isId('attestation', 'att_0000000000000000000000000u'), false, 'u is not Crockford base32');
  assert.equal(isId('attestation', 42), false);
});

test('deterministic ids are stable and valid', () => {
  const a = deterministicId('partner', Date.UTC(2026, 0, 1), 'x');
  assert.equal(a, deterministicId('partner', Date.UTC(2026, 0, 1), 'x'));
  assert.notEqual(a, deterministicId('partner', Date.UTC(2026, 0, 1), 'y'));
  assert.ok(isId('partner', a));
});
