import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The real cauri service, for the SDK's tests: its compiled test harness is loaded at run time from
 * the repository root (`dist/`), so the SDK neither depends on the server package nor compiles its
 * sources. The interfaces below name only what the tests use. `npm test` builds the root (and so the
 * server) before any test runs.
 */

export interface ManualClock {
  now(): Date;
  advance(ms: number): void;
  set(at: Date | string | number): void;
}

export interface Runtime {
  readonly app: { swagger(): unknown; listen(options: { host: string; port: number }): Promise<string> };
  readonly services: {
    clients: { create(name: string, scopes?: readonly string[]): Promise<{ client_id: string; client_secret: string }> };
    /** Reads the partners' execution reports, as the service's background loop would. */
    router: { pollReports(): Promise<number> };
  };
  readonly storage: { db: { selectFrom(table: string): { select(expr: unknown): { execute(): Promise<Record<string, unknown>[]> } } } };
}

export interface DatabaseCase {
  name: string;
  url: string | null;
}

export interface Service {
  DATABASES: readonly DatabaseCase[];
  startRuntime(t: TestContext, db: DatabaseCase, env?: Record<string, string>, options?: { clock?: ManualClock }): Promise<Runtime>;
  /** A deployment's configuration (data folder, database, master key), for several runtimes in turn. */
  testEnvironment(t: TestContext, db: DatabaseCase, env?: Record<string, string>): unknown;
  /** A runtime of that deployment: a restart is `close()` on one, then this again. */
  startRuntimeIn(t: TestContext, environment: unknown): Promise<Runtime & { close(): Promise<void> }>;
  listen(runtime: Runtime): Promise<string>;
  ManualClock: new (start?: Date | string | number) => ManualClock;
  /** A valid KYC2 attestation request in UEMOA (test/support/api.ts). */
  KYC2_REQUEST: Record<string, unknown>;
  SANDBOX_PARTNERS: readonly { id: string; name: string; jurisdiction: string; status?: string }[];
  /** The server's webhook signer (src/webhooks/core/signature.ts). */
  signatureHeader(secrets: readonly string[], timestamp: number, body: string | Uint8Array): string;
}

/** The repository root: `CAURI_SERVICE_DIR`, else the ancestor of this file that holds `packages/sdk`. */
export function serviceRoot(): string {
  const configured = process.env.CAURI_SERVICE_DIR;
  if (configured !== undefined && configured !== '') return resolve(configured);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'packages', 'sdk', 'package.json')) && existsSync(join(dir, 'src', 'app.ts'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no ancestor of ${fileURLToPath(import.meta.url)} is the cauri repository; set CAURI_SERVICE_DIR`);
    dir = parent;
  }
}

async function load(root: string, file: string): Promise<Record<string, unknown>> {
  const path = join(root, 'dist', file);
  if (!existsSync(path)) throw new Error(`${path} is missing: build the service first (npx tsc -b at the repository root)`);
  return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
}

let loaded: Promise<Service> | undefined;

export function service(): Promise<Service> {
  loaded ??= (async () => {
    const root = serviceRoot();
    const [harness, api, clock, seed, signature] = await Promise.all([
      load(root, 'test/support/harness.js'),
      load(root, 'test/support/api.js'),
      load(root, 'src/lib/clock.js'),
      load(root, 'src/partners/sandbox-seed.js'),
      load(root, 'src/webhooks/core/signature.js'),
    ]);
    return {
      DATABASES: harness.DATABASES,
      startRuntime: harness.startRuntime,
      testEnvironment: harness.testEnvironment,
      startRuntimeIn: harness.startRuntimeIn,
      listen: harness.listen,
      ManualClock: clock.ManualClock,
      KYC2_REQUEST: api.KYC2_REQUEST,
      SANDBOX_PARTNERS: seed.SANDBOX_PARTNERS,
      signatureHeader: signature.signatureHeader,
    } as Service;
  })();
  return loaded;
}
