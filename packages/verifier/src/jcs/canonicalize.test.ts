import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { canonicalize, canonicalizeBytes } from './canonicalize.js';
import { JcsError } from './errors.js';
import { readVector, readVectorJson, vectorPath } from '../testing/vectors.js';

function double(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt('0x' + hex));
  return view.getFloat64(0);
}

test('cyberphone testdata: the 6 input files canonicalise to the exact output bytes and outhex', () => {
  const names = readdirSync(vectorPath('jcs', 'input'))
    .filter((n) => n.endsWith('.json'))
    .sort();
  assert.deepEqual(names, ['arrays.json', 'french.json', 'structures.json', 'unicode.json', 'values.json', 'weird.json']);
  for (const name of names) {
    const input: unknown = JSON.parse(readVector('jcs', 'input', name).toString('utf8'));
    const expected = readVector('jcs', 'output', name);
    const outhex = readVector('jcs', 'outhex', name.replace('.json', '.txt')).toString('ascii');
    const got = Buffer.from(canonicalizeBytes(input));
    assert.ok(got.equals(expected), name);
    assert.equal(got.toString('hex'), outhex.replace(/\s+/g, ''), name);
    assert.equal(canonicalize(input), expected.toString('utf8'), name);
  }
});

test('RFC 8785 Appendix B: every finite sample serialises exactly, NaN and Infinity are rejected', () => {
  const file = readVectorJson<{ vectors: { ieee754_hex: string; expected: string | null; expected_error?: boolean }[] }>(
    'jcs',
    'rfc8785-appendix-b.json',
  );
  assert.equal(file.vectors.length, 26);
  for (const v of file.vectors) {
    const n = double(v.ieee754_hex);
    if (v.expected_error === true) {
      assert.throws(
        () => canonicalize(n),
        (e: unknown) => e instanceof JcsError && e.code === 'non_finite_number',
      );
    } else {
      assert.equal(canonicalize(n), v.expected, v.ieee754_hex);
    }
  }
});

test('es6testfile10k.txt: all 10,000 numbers', () => {
  const lines = readVector('jcs', 'es6testfile10k.txt').toString('ascii').split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines.length, 10_000);
  for (const line of lines) {
    const comma = line.indexOf(',');
    const n = double(line.slice(0, comma).padStart(16, '0'));
    assert.equal(canonicalize(n), line.slice(comma + 1), line);
  }
});

test('key order is by UTF-16 code units, not code points (RFC 8785 §3.2.3)', () => {
  // U+FB33 (one unit 0xFB33) sorts after U+1F602 (surrogates 0xD83D 0xDE02).
  assert.equal(canonicalize({ '\ufb33': 1, '\u{1f602}': 2, a: 3 }), '{"a":3,"\u{1f602}":2,"\ufb33":1}');
  assert.equal(canonicalize({ b: [1, { d: null, c: true }], a: 'x' }), '{"a":"x","b":[1,{"c":true,"d":null}]}');
  assert.equal(canonicalize(-0), '0');
  assert.equal(canonicalize('\u0000\u001f\u007f"\\/'), '"\\u0000\\u001f\u007f\\"\\\\/"');
  assert.equal(canonicalize(Object.assign(Object.create(null) as object, { z: 1 })), '{"z":1}');
});

test('values without a JSON form throw a JcsError with a closed code', () => {
  const cases: [unknown, string][] = [
    [Number.NaN, 'non_finite_number'],
    [{ a: Number.POSITIVE_INFINITY }, 'non_finite_number'],
    [undefined, 'unsupported_type'],
    [{ a: undefined }, 'unsupported_type'],
    // biome-ignore lint/suspicious/noSparseArray: a hole is the input under test.
    [[1, , 3], 'unsupported_type'],
    [() => 1, 'unsupported_type'],
    [10n, 'unsupported_type'],
    [Symbol('s'), 'unsupported_type'],
    [new Date(0), 'unsupported_type'],
    [new Map(), 'unsupported_type'],
    ['\ud800', 'lone_surrogate'],
    [{ '\udc00x': 1 }, 'lone_surrogate'],
  ];
  for (const [value, code] of cases) {
    assert.throws(
      () => canonicalize(value),
      (e: unknown) => e instanceof JcsError && e.code === code,
      String(code),
    );
  }
  const cyclic: Record<string, unknown> = {};
  cyclic['self'] = cyclic;
  assert.throws(
    () => canonicalize(cyclic),
    (e: unknown) => e instanceof JcsError && e.code === 'cycle',
  );
  // A shared (non-cyclic) reference is fine.
  const shared = { x: 1 };
  assert.equal(canonicalize([shared, shared]), '[{"x":1},{"x":1}]');
});
