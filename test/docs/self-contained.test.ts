import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './documents.js';
import { fencedBlocks } from './markdown.js';

/** The repository's tracked files, as git lists them, with their text (binary files left out). */
function trackedTexts(): { path: string; text: string }[] {
  const paths = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((p) => p !== '');
  assert.ok(paths.length > 100, `git lists the checkout's files (found ${paths.length})`);
  return paths
    .filter((path) => existsSync(join(ROOT, path)))
    .map((path) => ({ path, buffer: readFileSync(join(ROOT, path)) }))
    .filter(({ buffer }) => !buffer.includes(0))
    .map(({ path, buffer }) => ({ path, text: buffer.toString('utf8') }));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (outside code blocks), with GitHub's -1, -2 for repeats. */
function anchors(markdown: string): Set<string> {
  const inCode = new Set<number>();
  for (const block of fencedBlocks(markdown)) for (let i = 0; i <= block.code.split('\n').length + 1; i++) inCode.add(block.line + i);
  const seen = new Map<string, number>();
  const result = new Set<string>();
  markdown.split('\n').forEach((line, index) => {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined || inCode.has(index + 1)) return;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  });
  return result;
}

// The contract documents the service was written from, which the repository does not ship. Spelt in
// parts so that this file does not name them.
const FOREIGN_CONTRACTS = [
  ['decisions', 'md'],
  ['brokerage-api-v1', 'md'],
].map((parts) => parts.join('.'));

test('no tracked file refers to a contract document the repository does not ship', () => {
  const offenders = trackedTexts()
    .filter(({ text }) => FOREIGN_CONTRACTS.some((name) => text.toLowerCase().includes(name)))
    .map(({ path }) => path);
  assert.deepEqual(
    offenders,
    [],
    'the rules belong in docs/: cite the page (docs/concepts.md#instruments-and-prices) or state the rule in the comment',
  );
});

test('every docs/ page a tracked file cites exists, and so does the section it names', () => {
  const problems: string[] = [];
  const cache = new Map<string, Set<string> | null>();
  for (const { path, text } of trackedTexts()) {
    for (const match of text.matchAll(/\bdocs\/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?/g)) {
      const page = `docs/${match[1]}`;
      if (!cache.has(page)) cache.set(page, existsSync(join(ROOT, page)) ? anchors(readFileSync(join(ROOT, page), 'utf8')) : null);
      const found = cache.get(page);
      if (found === null || found === undefined) problems.push(`${path}: ${page} does not exist`);
      else if (match[2] !== undefined && !found.has(match[2])) problems.push(`${path}: ${page} has no section #${match[2]}`);
    }
  }
  assert.deepEqual(problems, []);
});
