import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../lib/errors.js';
import { CursorCodec } from './cursor.js';

const codec = new CursorCodec(randomBytes(32));
const isCursorError = (e: unknown) => e instanceof ApiError && e.code === 'validation_error' && e.details?.[0]?.field === 'cursor';

test('a cursor round-trips for the same listing and filters', () => {
  const token = codec.encode('partners', { jurisdiction: 'UEMOA', capability: undefined }, { position: 'sgi_x', direction: 'next' });
  assert.deepEqual(codec.decode(token, 'partners', { jurisdiction: 'UEMOA' }), { position: 'sgi_x', direction: 'next' });
});

test('a cursor is refused when forged, tampered, foreign or reused with other filters', () => {
  const token = codec.encode('partners', {}, { position: 'sgi_x', direction: 'next' });
  const [payload, mac] = token.split('.') as [string, string];
  const forged = Buffer.from(JSON.stringify(['partners', '', 'next', 'sgi_y'])).toString('base64url');
  assert.throws(() => codec.decode(`${forged}.${mac}`, 'partners', {}), isCursorError);
  assert.throws(() => codec.decode(`${payload}.${mac.slice(0, -2)}AA`, 'partners', {}), isCursorError);
  assert.throws(() => codec.decode('abc', 'partners', {}), isCursorError);
  assert.throws(() => codec.decode('', 'partners', {}), isCursorError);
  assert.throws(() => codec.decode(token, 'instruments', {}), isCursorError);
  assert.throws(() => codec.decode(token, 'partners', { jurisdiction: 'GHANA' }), isCursorError);
  assert.throws(() => new CursorCodec(randomBytes(32)).decode(token, 'partners', {}), isCursorError, 'another deployment key');
});
