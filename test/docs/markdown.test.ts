import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fencedBlocks, runnableShellBlocks, shellScript } from './markdown.js';

const SAMPLE = [
  '# Title',
  '',
  '```sh service',
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
  '',
  '1. A step:',
  '   ```sh production',
  '   npx cauri keys rotate',
  '     --json',
  '   ```',
].join('\n');

test('fencedBlocks: language, attributes, body and line of every fence, nested fences kept', () => {
  assert.deepEqual(
    fencedBlocks(SAMPLE).map((b) => [b.language, b.attributes, b.code, b.line]),
    [
      ['sh', ['service'], 'npm start', 3],
      ['sh', [], 'echo one\necho two', 7],
      ['json', [], '{"a":1}', 12],
      ['sh', [], 'cat <<EOF\n```\nEOF', 16],
      ['', [], 'plain', 22],
      ['sh', ['production'], 'npx cauri keys rotate\n  --json', 27],
    ],
  );
});

test('runnableShellBlocks skips marked blocks and other languages; shellScript joins them under set -euo pipefail', () => {
  const blocks = runnableShellBlocks(SAMPLE);
  assert.deepEqual(
    blocks.map((b) => b.line),
    [7, 16],
  );
  const script = shellScript(blocks, 'x.md');
  assert.match(script, /^set -euo pipefail\n/);
  assert.ok(script.indexOf('echo one') < script.indexOf('cat <<EOF'));
  assert.ok(script.includes('echo "--- x.md:7" >&2'));
});
