import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ScriptResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs a bash script in its own process group and, when bash exits, ends whatever it left running
 * in that group (a reader's `&` receiver when the script failed before stopping it). Only this
 * group is signalled: nothing else on the machine is touched.
 */
export async function runBash(script: string, options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<ScriptResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-doc-script-'));
  const path = join(dir, 'script.sh');
  writeFileSync(path, script);
  const child = spawn('bash', [path], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // ESRCH: nothing of the group is left.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup('SIGKILL');
  }, options.timeoutMs);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(timer);
    killGroup('SIGTERM');
    // Background processes hold the output pipes until they end; give them a moment to flush.
    await new Promise<void>((resolve) => {
      const grace = setTimeout(resolve, 2000);
      let open = 2;
      const done = () => {
        if (--open === 0) {
          clearTimeout(grace);
          resolve();
        }
      };
      child.stdout.once('close', done);
      child.stderr.once('close', done);
    });
    return { code, signal, stdout, stderr, timedOut };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A TCP port free on the loopback interface at the time of the call. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
