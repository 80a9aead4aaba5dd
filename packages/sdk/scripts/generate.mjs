// Regenerates src/generated/openapi.ts from the service's own OpenAPI document.
//
//   npx tsc -b && npm run generate -w @cauri/sdk          (from the repository root)
//   node scripts/generate.mjs --from http://127.0.0.1:8080 (from a running service instead)
//
// By default the service is built in-process from the compiled root (dist/src/app.js) on a throw-away
// SQLite folder, with no workers and no listener, and its document (`app.swagger()`, what
// GET /v1/openapi.json serves) is rendered by openapi-typescript. src/codegen/generated.test.ts
// renders the same way and fails while the checked-in file differs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const { renderOpenApiTypes, GENERATED_PATH } = await import(pathToFileURL(join(packageDir, 'dist/codegen/render.js')).href);

async function fromRunningService(baseUrl) {
  const res = await fetch(new URL('/v1/openapi.json', baseUrl));
  if (!res.ok) throw new Error(`GET ${baseUrl}/v1/openapi.json: ${res.status}`);
  return res.json();
}

async function fromBuiltService() {
  const root = process.env.CAURI_SERVICE_DIR ?? join(packageDir, '..', '..');
  const load = (file) => import(pathToFileURL(join(root, 'dist', file)).href);
  const [{ parseConfig }, { createRuntime }] = await Promise.all([load('src/config/config.js'), load('src/app.js')]);
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-sdk-generate-'));
  try {
    const config = parseConfig({
      CAURI_DATA_DIR: dataDir,
      CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
      CAURI_WORKERS: 'none',
      CAURI_SEED: 'false',
      LOG_LEVEL: 'silent',
    });
    const runtime = await createRuntime(config);
    try {
      return runtime.app.swagger();
    } finally {
      await runtime.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const fromIndex = process.argv.indexOf('--from');
const document = fromIndex > 0 ? await fromRunningService(process.argv[fromIndex + 1]) : await fromBuiltService();
const target = join(packageDir, GENERATED_PATH);
writeFileSync(target, await renderOpenApiTypes(document));
console.log(`wrote ${target}`);
