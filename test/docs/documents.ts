import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { spawnService } from '../support/process.js';
import { runnableShellBlocks, shellScript } from './markdown.js';
import { freePort, runBash, type ScriptResult } from './shell.js';

// Compiled to dist/test/docs/: the repository root is three levels up.
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** README.md and every page of docs/, in a stable order, as paths relative to the repository root. */
export function documents(): string[] {
  const pages = (folder: string) =>
    readdirSync(join(ROOT, folder))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `${folder}/${name}`);
  return ['README.md', ...pages('docs'), ...pages('docs/fr')];
}

export function readDocument(doc: string): string {
  return readFileSync(join(ROOT, doc), 'utf8');
}

export interface DocumentRun extends ScriptResult {
  /** The exit status, both outputs and the cause of a timeout, for assertion messages. */
  context: string;
}

/**
 * Runs a document's shell blocks (those without a not-run mark), in order, in one bash process,
 * against a fresh sandbox on SQLite started as a separate process on loopback, as a reader who
 * followed the document from a clone would. The environment stands in for the marked blocks: the
 * spawned service is the one `npm start` starts, `BASE` its address, `CAURI_DATA_DIR` the folder it
 * and the operator commands (`npx cauri clients create`, ...) share (`./data` for a reader),
 * `HOOK_PORT` a free port for a webhook receiver. The working directory is an empty folder inside
 * the build output, so `npx cauri` is this checkout's command and the files a document writes
 * (`rates.json`, ...) land outside the sources. Empty values override any `.env` at the root.
 */
export async function runDocument(
  t: TestContext,
  doc: string,
  options: {
    service?: Record<string, string> /** Added to the shell's environment only (a locale, say). */;
    shell?: Record<string, string>;
    timeoutMs: number;
    /**
     * `direct`: `npx cauri` runs this checkout's bin without npm's start-up and its walk of
     * node_modules (over a second a call), which npm only does to find that same bin; README.md and
     * the first steps keep the real npx (`real`).
     */
    npx?: 'real' | 'direct';
  },
): Promise<DocumentRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-docs-'));
  mkdirSync(join(ROOT, 'dist', 'docs-run'), { recursive: true });
  const workDir = mkdtempSync(join(ROOT, 'dist', 'docs-run', 'work-'));
  t.after(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  });
  const deployment = {
    CAURI_MODE: 'sandbox',
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: '',
    CAURI_PUBLIC_URL: '',
    DATABASE_URL: '',
    REDIS_URL: '',
    CAURI_WORKERS: 'all',
    CAURI_ANCHOR: 'sandbox',
    CAURI_SEED: 'true',
    // The simulated exchange keeps its hours, as for a reader: the pages' orders are on test clocks.
    CAURI_SANDBOX_MARKET_HOURS: 'exchange',
    HOST: '127.0.0.1',
    ...options.service,
  };
  const { base } = await spawnService(t, deployment);
  const script = shellScript(runnableShellBlocks(readDocument(doc)), doc);
  const bin = join(ROOT, 'dist', 'src', 'cli', 'cauri.cjs');
  const direct = `npx() { if [ "$1" = cauri ]; then shift; node ${JSON.stringify(bin)} "$@"; else command npx "$@"; fi; }\n`;
  const result = await runBash((options.npx ?? 'direct') === 'direct' ? direct + script : script, {
    cwd: workDir,
    // CAURI_CONFIG_DIR: `cauri login` and `cauri listen` keep their files in a folder of this run, not the user's.
    env: {
      ...process.env,
      ...deployment,
      ...options.shell,
      BASE: base,
      HOOK_PORT: String(await freePort()),
      LOG_LEVEL: 'silent',
      CAURI_CONFIG_DIR: join(dataDir, 'config'),
    },
    timeoutMs: options.timeoutMs,
  });
  const context = `${doc}: exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
  return { ...result, context };
}
