import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The shared third-party vectors (`shared/vectors/`): `CAURI_VECTORS_DIR`, else the first ancestor of
 * this module that holds `shared/vectors/README.md`. Throws when there is none, so a test never passes
 * by skipping its vectors.
 */
export function vectorsDir(): string {
  const configured = process.env.CAURI_VECTORS_DIR;
  if (configured !== undefined && configured !== '') {
    const dir = resolve(configured);
    if (!existsSync(join(dir, 'README.md'))) throw new Error(`CAURI_VECTORS_DIR=${configured} does not contain README.md`);
    return dir;
  }
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, 'shared', 'vectors');
    if (existsSync(join(candidate, 'README.md'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`no ancestor of ${start} contains shared/vectors/README.md; set CAURI_VECTORS_DIR`);
  }
}
