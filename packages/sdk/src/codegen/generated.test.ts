import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { service } from '../testing/service.js';
import { GENERATED_PATH, renderOpenApiTypes } from './render.js';

// From dist/codegen/ (compiled) or src/codegen/, the package folder is two levels up.
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

test('src/generated/openapi.ts is what the service of this tree documents (else: npm run generate -w @cauri/sdk)', async (t) => {
  const svc = await service();
  const runtime = await svc.startRuntime(t, svc.DATABASES[0]!, { CAURI_WORKERS: 'none', CAURI_SEED: 'false' });
  const fresh = await renderOpenApiTypes(runtime.app.swagger());
  const checkedIn = readFileSync(join(packageDir, GENERATED_PATH), 'utf8');
  if (fresh !== checkedIn) {
    const a = checkedIn.split('\n');
    const b = fresh.split('\n');
    let line = 0;
    while (line < a.length && a[line] === b[line]) line++;
    assert.fail(
      `${GENERATED_PATH} is stale: first difference at line ${line + 1}\n  checked in: ${a[line] ?? '<end>'}\n  service:    ${b[line] ?? '<end>'}\n` +
        'Regenerate: npx tsc -b && npm run generate -w @cauri/sdk',
    );
  }
});
