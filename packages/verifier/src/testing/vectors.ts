// Locates the shared test vectors without writing any machine path into the
// repository: CAURI_VECTORS_DIR wins, else the nearest ancestor holding
// shared/vectors/README.md. Test-only; not exported from the package.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function locate(): string {
  const fromEnv = process.env['CAURI_VECTORS_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'shared', 'vectors');
    if (existsSync(join(candidate, 'README.md'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('shared/vectors not found: set CAURI_VECTORS_DIR');
    dir = parent;
  }
}

export const vectorsDir = locate();

export function vectorPath(...parts: string[]): string {
  return join(vectorsDir, ...parts);
}

export function readVector(...parts: string[]): Buffer {
  return readFileSync(vectorPath(...parts));
}

export function readVectorJson<T = unknown>(...parts: string[]): T {
  return JSON.parse(readVector(...parts).toString('utf8')) as T;
}
