import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonErrorOffset, lineAndColumn } from './json-file.js';

test('jsonErrorOffset accepts what JSON.parse accepts', () => {
  for (const text of [
    '{}',
    '[]',
    ' {"a": [1, -2.5e+3, 0, true, false, null, "x\\"\\u00e9\\n"], "b": {}} ',
    '"s"',
    '0',
    '-0.0E1',
    '\n[\n]\n',
  ]) {
    JSON.parse(text);
    assert.equal(jsonErrorOffset(text), null, text);
  }
});

test('jsonErrorOffset points at the first character that breaks the syntax', () => {
  const cases: [string, number][] = [
    ['{\n  "exchange": "GSE",\n  "years" [2026]\n}', 33],
    ['[1, 2', 5],
    ['{"a": 1,}', 8],
    ['{"a": 01}', 7],
    ['{"a": tru}', 6],
    ["{'a': 1}", 1],
    ['{"a": "line\nbreak"}', 6],
    ['[1] [2]', 4],
    ['', 0],
  ];
  for (const [text, offset] of cases) {
    assert.throws(() => JSON.parse(text), SyntaxError, text);
    assert.equal(jsonErrorOffset(text), offset, text);
  }
  assert.deepEqual(lineAndColumn('{\n  "exchange": "GSE",\n  "years" [2026]\n}', 33), { line: 3, column: 11 });
});
