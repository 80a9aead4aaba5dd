import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fencedBlocks, runnableShellBlocks, shellScript } from './markdown.js';

const SAMPLE = [
  '# Title',
  '',
  '```sh no-test',
  'npm start',
  '```',
  '',
  '```sh',
  'echo one',
  'echo two',
  '```',
  '',
  '```json',
  '{"a":1}',
  '```',
  '',
  '````sh',
  'cat <<EOF',
  '```',
  'EOF',
  '````',
  '',
  '```',
  'plain',
  '```',
].join('\n');

test('fencedBlocks: language, attributes, body and line of every fence, nested fences kept', () => {
  assert.deepEqual(
    fencedBlocks(SAMPLE).map((b) => [b.language, b.attributes, b.code, b.line]),
    [
      ['sh', ['no-test'], 'npm start', 3],
      ['sh', [], 'echo one\necho two', 7],
      ['json', [], '{"a":1}', 12],
      ['sh', [], 'cat <<EOF\n```\nEOF', 16],
      ['', [], 'plain', 22],
    ],
  );
});

test('runnableShellBlocks skips no-test and other languages; shellScript joins them under set -euo pipefail', () => {
  const blocks = runnableShellBlocks(SAMPLE);
  assert.deepEqual(blocks.map((b) => b.line), [7, 16]);
  const script = shellScript(blocks, 'x.md');
  assert.match(script, /^set -euo pipefail\n/);
  assert.ok(script.indexOf('echo one') < script.indexOf('cat <<EOF'));
  assert.ok(script.includes('echo "--- x.md:7" >&2'));
});
