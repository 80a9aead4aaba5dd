import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonNesting, MAX_BODY_DEPTH } from './json-body.js';

test('nesting counts arrays and objects, not brackets inside strings', () => {
  const vectors: [string, number][] = [
    ['1', 0],
    ['"[[[{{{"', 0],
    ['{}', 1],
    ['[]', 1],
    ['{"a":[1,{"b":null}]}', 3],
    ['[[],[[]],[]]', 3],
    ['{"a":"]]]}}}","b":{"c":{}}}', 3],
    ['{"a":"\\"[[[","b":[]}', 2],
    ['{"a":"\\\\","b":[[]]}', 3],
    ['{"k\\"{":[{"x":"\\\\\\"]"}]}', 3],
    ['  [ [ [ ] ] ]  ', 3],
  ];
  for (const [text, depth] of vectors) assert.equal(jsonNesting(text), depth, text);
});

test('the deepest branch counts, wherever it is', () => {
  assert.equal(jsonNesting(`[${'[]'.repeat(1000)},${'['.repeat(40)}${']'.repeat(40)}]`), 41);
});

test('a body of thousands of levels is measured without recursion, in linear time', () => {
  const depth = 60_000; // more than a 64 KiB body can hold, and far beyond a recursive walk's stack
  const text = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const started = process.hrtime.bigint();
  assert.equal(jsonNesting(text), depth);
  assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 200, 'measured in well under 200 ms');
  assert.ok(MAX_BODY_DEPTH >= 8 && MAX_BODY_DEPTH < 100);
});

test('text that is not JSON still gets a number (the parser refuses it afterwards)', () => {
  assert.equal(jsonNesting('[[[ "unterminated'), 3);
  assert.equal(jsonNesting(']]]'), 0);
});
