import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The shared third-party test vectors (`shared/vectors/`), which live beside the repository and are
 * never copied into it. `CAURI_VECTORS_DIR` names the folder explicitly (CI, other checkouts);
 * otherwise the folder is found by walking up from `from` (default: this module's own location,
 * which works both from `test/support/` and from the compiled `dist/test/support/`) until an
 * ancestor holds `shared/vectors/README.md`. Throws, naming what it tried, when there is none: a
 * test that silently skipped its vectors would prove nothing.
 */
export function vectorsDir(from: string | URL = import.meta.url): string {
  const configured = process.env.CAURI_VECTORS_DIR;
  if (configured !== undefined && configured !== '') {
    const dir = resolve(configured);
    if (!existsSync(join(dir, 'README.md'))) {
      throw new Error(`CAURI_VECTORS_DIR=${configured} does not contain README.md`);
    }
    return dir;
  }
  const start = typeof from === 'string' && !from.startsWith('file:') ? resolve(from) : fileURLToPath(from);
  let dir = dirname(start);
  for (;;) {
    const candidate = join(dir, 'shared', 'vectors');
    if (existsSync(join(candidate, 'README.md'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`no ancestor of ${dirname(start)} contains shared/vectors/README.md; set CAURI_VECTORS_DIR`);
}
