import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { listen, startRuntimeIn, testEnvironment, DATABASES } from '../support/harness.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ pointer?: string; source?: { ref?: string } }>;
}

type Document = { paths: Record<string, Record<string, { operationId?: string }>> };

/** `#/paths/~1v1~1orders/post/responses` -> `POST /v1/orders (createOrder)`; other places as their pointer. */
export function placeOf(pointer: string, document: Document): string {
  const segments = pointer
    .replace(/^#\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (segments[0] !== 'paths' || segments[1] === undefined) return pointer;
  const path = segments[1];
  const method = segments[2];
  if (method === undefined) return `path ${path}`;
  const operationId = document.paths[path]?.[method]?.operationId;
  return `${method.toUpperCase()} ${path} (${operationId ?? 'no operationId'})${segments.length > 3 ? ` at ${segments.slice(3).join('/')}` : ''}`;
}

/** Runs the linter on one file with the repository's rules; its JSON report. */
async function lint(
  file: string,
  cwd: string,
): Promise<{ totals: { errors: number; warnings: number; ignored: number }; problems: Problem[] }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [REDOCLY, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'],
    {
      cwd,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    },
  ).catch((error: { stdout?: string }) => {
    // Exit code 1 when there are errors; the report is on stdout all the same.
    if (typeof error.stdout === 'string' && error.stdout.trim().startsWith('{')) return { stdout: error.stdout };
    throw error;
  });
  return JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: Problem[] };
}

/**
 * `redocly lint` with the recommended rules (redocly.yaml) on the document the service serves, in
 * both modes (the sandbox has the test clock routes). Any error or warning fails, each named by the
 * operation at fault. The linter runs offline: usage data and update checks are off.
 */
test('redocly lint (recommended rules) passes on the served OpenAPI document, with no error or warning', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-openapi-lint-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const documents = new Map<string, Document>();
  for (const [mode, env] of [
    ['sandbox', {}],
    ['production', { CAURI_MODE: 'production', CAURI_PUBLIC_URL: 'https://api.broker.test' }],
  ] as const) {
    const runtime = await startRuntimeIn(t, testEnvironment(t, DATABASES[0]!, { CAURI_WORKERS: 'none', CAURI_SEED: 'false', ...env }));
    const res = await fetch(`${await listen(runtime)}/v1/openapi.json`);
    assert.equal(res.status, 200);
    const text = await res.text();
    writeFileSync(join(dir, `${mode}.json`), text);
    documents.set(`${mode}.json`, JSON.parse(text) as Document);
  }

  const lines: string[] = [];
  const totals: Record<string, unknown> = {};
  for (const [file, document] of documents) {
    const report = await lint(join(dir, file), dir);
    totals[file] = report.totals;
    for (const p of report.problems) {
      const where = p.location[0];
      const place = where?.pointer === undefined ? '(document)' : placeOf(where.pointer, document);
      lines.push(`${p.severity} ${p.ruleId} in ${file}: ${place}: ${p.message}`);
    }
  }
  assert.deepEqual(lines, [], `redocly lint found problems (see docs/api-conventions.md):\n${lines.join('\n')}`);
  const clean = { errors: 0, warnings: 0, ignored: 0 };
  assert.deepEqual(totals, { 'sandbox.json': clean, 'production.json': clean });
});

test('placeOf names the operation of a pointer', () => {
  const document: Document = { paths: { '/v1/orders/{id}': { get: { operationId: 'getOrder' } } } };
  assert.equal(placeOf('#/paths/~1v1~1orders~1{id}/get/responses/200', document), 'GET /v1/orders/{id} (getOrder) at responses/200');
  assert.equal(placeOf('#/paths/~1v1~1orders~1{id}/get', document), 'GET /v1/orders/{id} (getOrder)');
  assert.equal(placeOf('#/paths/~1v1~1other/post', document), 'POST /v1/other (no operationId)');
  assert.equal(placeOf('#/info', document), '#/info');
});
