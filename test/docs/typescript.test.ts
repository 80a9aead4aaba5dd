import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { documents, readDocument, ROOT } from './documents.js';
import { fencedBlocks, type FencedBlock } from './markdown.js';

interface CodeBlock {
  doc: string;
  block: FencedBlock;
}

function blocksOf(languages: readonly string[]): CodeBlock[] {
  return documents().flatMap((doc) =>
    fencedBlocks(readDocument(doc))
      .filter((block) => languages.includes(block.language))
      .map((block) => ({ doc, block })),
  );
}

/**
 * Where a `ts` block is checked. A block whose info string names a file of the repository
 * (```` ```ts src/things/thing.routes.ts ````) is checked as that file, with the service's sources
 * around it; any other block is code of an integrator's project, checked as a module outside the
 * sources that imports the published packages (`@cauri/verifier`, `@cauri/sdk`) by name. No file is
 * written: the compiler reads the block from memory and everything else from the checkout.
 */
function virtualPath({ doc, block }: CodeBlock): string {
  const named = block.attributes[0];
  if (named !== undefined) return resolve(ROOT, named);
  return resolve(ROOT, 'dist', 'docs-run', `${doc.replace(/[/.]/g, '-')}-${block.line}.ts`);
}

test('every ts block of README.md and docs/ type-checks against the packages and sources as written', () => {
  const blocks = blocksOf(['ts', 'typescript']);
  assert.ok(blocks.length >= 3, `expected the README's, audit's and api-conventions' blocks, found ${blocks.length}`);
  const files = new Map(blocks.map((b) => [virtualPath(b), b]));
  // The repository's compiler settings, without what only a build needs.
  const base = ts.readConfigFile(join(ROOT, 'tsconfig.base.json'), (p) => ts.sys.readFile(p));
  const { options } = ts.convertCompilerOptionsFromJson(base.config.compilerOptions, ROOT);
  Object.assign(options, { noEmit: true, composite: false, incremental: false, declaration: false, sourceMap: false });
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getCurrentDirectory = () => ROOT;
  host.fileExists = (path) => files.has(resolve(path)) || ts.sys.fileExists(path);
  host.readFile = (path) => files.get(resolve(path))?.block.code ?? ts.sys.readFile(path);
  host.getSourceFile = (path, language, onError, create) => {
    const block = files.get(resolve(path));
    return block !== undefined
      ? ts.createSourceFile(path, block.block.code, language, true)
      : getSourceFile(path, language, onError, create);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const problems = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file === undefined || files.has(resolve(d.file.fileName)))
    .map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (d.file === undefined || d.start === undefined) return message;
      const { doc, block } = files.get(resolve(d.file.fileName)) as CodeBlock;
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      // The block's first line is the one after its opening fence.
      return `${doc}:${block.line + 1 + line}: ${message}`;
    });
  assert.deepEqual(problems, []);
});

test('every js block of README.md and docs/ is valid JavaScript (node --check)', () => {
  const blocks = blocksOf(['js', 'javascript']);
  const dir = mkdtempSync(join(tmpdir(), 'cauri-docs-js-'));
  try {
    for (const { doc, block } of blocks) {
      // An ES module when it imports or exports, as Node would read it from a .mjs file.
      const path = join(dir, `block-${block.line}.${/^\s*(import|export)\b/m.test(block.code) ? 'mjs' : 'cjs'}`);
      writeFileSync(path, block.code);
      const result = spawnSync(process.execPath, ['--check', path], { encoding: 'utf8' });
      assert.equal(result.status, 0, `${doc}:${block.line}: ${result.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
