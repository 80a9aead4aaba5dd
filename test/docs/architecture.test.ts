import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled to dist/test/docs/: the repository root is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOC = 'docs/architecture.md';

/** Repository paths a Markdown text names: `src/...`, `test/...` and the like, placeholders (`<CODE>`) left out. */
function namedPaths(markdown: string): string[] {
  const found = new Set<string>();
  for (const match of markdown.matchAll(/(?<![\w/.-])(?:src|test|bench|packages|scripts|calendars|fees|docs)\/[\w./<>-]*/g)) {
    const path = match[0].replace(/[.,;:]+$/, '');
    if (!path.includes('<')) found.add(path);
  }
  // Links to sibling pages: [markets.md](markets.md).
  for (const match of markdown.matchAll(/\]\(([\w-]+\.md)(?:#[\w-]*)?\)/g)) found.add(`docs/${match[1]}`);
  return [...found].sort();
}

test('every file and folder docs/architecture.md names exists', () => {
  const paths = namedPaths(readFileSync(join(ROOT, DOC), 'utf8'));
  assert.ok(paths.length >= 40, `only ${paths.length} paths found: the page names the files of an order's and a webhook's path`);
  const missing = paths.filter((p) => !existsSync(join(ROOT, p)));
  assert.deepEqual(missing, [], `${DOC} names paths that do not exist`);
});

test('namedPaths finds code paths and sibling pages, and leaves placeholders out', () => {
  const text =
    'See `src/orders/order.routes.ts`, src/workers/ and [markets.md](markets.md#x); `calendars/<CODE>.json`, not `src/nowhere.ts`.';
  assert.deepEqual(namedPaths(text), ['docs/markets.md', 'src/nowhere.ts', 'src/orders/order.routes.ts', 'src/workers/']);
  assert.equal(existsSync(join(ROOT, 'src/nowhere.ts')), false, 'a path that does not exist is reported');
});

/** Top-level folders of src/ that import each other, both ways, through chains of relative imports. */
function folderCycles(): string[][] {
  const src = join(ROOT, 'src');
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        // Migrations are frozen in time and import nothing of the application.
        if (name !== 'migrations') walk(path);
      } else if (/\.c?ts$/.test(name) && !name.endsWith('.test.ts')) files.push(path);
    }
  };
  walk(src);
  const top = (path: string) => (relative(src, path).split('/')[0] as string).replace(/\.c?ts$/, '');
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
      const spec = match[1] as string;
      // The schema gathers every domain's table types: the one import allowed against the layers.
      if (relative(src, file) === 'storage/schema.ts' && spec.endsWith('.table.js')) continue;
      const from = top(file);
      const to = top(resolve(dirname(file), spec));
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)?.add(to);
    }
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

test('no import cycle between folders of src/', () => {
  assert.deepEqual(folderCycles(), [], 'folders that import each other');
});
