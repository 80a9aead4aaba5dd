import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repeatedMemberName } from '../index.js';

test('repeatedMemberName: the first name one object holds twice, compared unescaped', () => {
  for (const [text, expected] of [
    ['{"a":1,"b":2}', null],
    ['{"a":{"a":1},"b":[{"a":1},{"a":2}]}', null],
    ['["a","a",{"a":"a"}]', null],
    ['{"a":"}\\",\\"a\\":{","b":1}', null],
    ['{"k":{},"a":[],"b":{}}', null],
    ['{"a":1,"a":2}', 'a'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"x":[{"a":1,"b":{"c":1,"c":2}}]}', 'c'],
    ['{"x":{}, "y":1 , "x":2}', 'x'],
    ['"text"', null],
    ['7', null],
  ] as const) {
    assert.equal(repeatedMemberName(text), expected, text);
  }
});
