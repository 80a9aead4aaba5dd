import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findLoneSurrogate, loneSurrogateDetail, wellFormed } from './unicode.js';

test('well-formed text, surrogate pairs included, has no lone surrogate', () => {
  for (const value of [null, 1, true, 'plain', 'é€😀', '\ud83d\ude00', { a: ['x', { b: '\ud83d\ude02' }], '😀': 1 }, []]) {
    assert.equal(findLoneSurrogate(value), null, JSON.stringify(value));
  }
});

test('a lone high or low surrogate is found wherever it is, with its path', () => {
  assert.deepEqual(findLoneSurrogate('\udfff'), { path: [], memberName: false, text: '\udfff', index: 0 });
  assert.deepEqual(findLoneSurrogate({ note: 'ab\ud800' }), { path: ['note'], memberName: false, text: 'ab\ud800', index: 2 });
  // A pair written backwards is two lone surrogates.
  assert.equal(findLoneSurrogate({ x: '\ude00\ud83d' })?.index, 0);
  assert.deepEqual(findLoneSurrogate({ a: [{ ok: '😀' }, { m: 'x\udc00' }] })?.path, ['a', '1', 'm']);
  assert.deepEqual(findLoneSurrogate({ meta: { '\udc00k': 1 } }), {
    path: ['meta', '\udc00k'],
    memberName: true,
    text: '\udc00k',
    index: 0,
  });
  // The first in document order.
  assert.deepEqual(findLoneSurrogate({ a: 'ok', b: '\ud800', c: '\udfff' })?.path, ['b']);
});

test('the error detail names the field and is itself valid Unicode', () => {
  const detail = loneSurrogateDetail(findLoneSurrogate({ client_metadata: { note: 'a\udfffb' } }) ?? assert.fail());
  assert.deepEqual(
    { ...detail, message: undefined },
    { field: 'client_metadata.note', rule: 'unicode', value: 'a\ufffdb', message: undefined },
  );
  assert.match(String(detail.message), /U\+DFFF\) at index 1/);
  const named = loneSurrogateDetail(findLoneSurrogate({ m: { '\ud800': 1 } }) ?? assert.fail());
  assert.equal(named.field, 'm.\ufffd');
  assert.match(String(named.message), /member name/);
  assert.equal(loneSurrogateDetail(findLoneSurrogate('\ud800') ?? assert.fail()).field, 'body');
  assert.equal(wellFormed('\ud83d\ude00\ud800'), '\ud83d\ude00\ufffd');
});
