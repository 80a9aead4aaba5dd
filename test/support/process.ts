import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';

const CLI = fileURLToPath(new URL('../../src/cli/cauri.cjs', import.meta.url));

export interface SpawnedProcess {
  base: string;
  pid: number;
  /** Everything it wrote so far, standard output and error. */
  output(): string;
  /** Sends SIGTERM and resolves once it has exited. */
  stop(): Promise<void>;
  /** Resolves once it has exited, with its exit code (null when a signal ended it) and that signal. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `cauri serve` as a separate OS process and returns its base URL once it listens. */
export async function spawnService(t: TestContext, env: Record<string, string>): Promise<SpawnedProcess> {
  return spawnCommand(t, 'serve', env, /"address":"(http:\/\/[^"]+)"/);
}

/** Runs `cauri worker` as a separate OS process, once its workers run. */
export async function spawnWorker(t: TestContext, env: Record<string, string>): Promise<SpawnedProcess> {
  return spawnCommand(t, 'worker', env, /(workers running)/);
}

/**
 * Runs `cauri serve --role <role>`: `api` and `all` once they listen (with their base URL), `worker`
 * once its workers run (base is then empty).
 */
export async function spawnRole(t: TestContext, role: 'api' | 'worker' | 'all', env: Record<string, string>): Promise<SpawnedProcess> {
  const spawned = await spawnCommand(
    t,
    ['serve', '--role', role],
    env,
    role === 'worker' ? /(workers running)/ : /"address":"(http:\/\/[^"]+)"/,
  );
  return role === 'worker' ? { ...spawned, base: '' } : spawned;
}

async function spawnCommand(
  t: TestContext,
  command: string | string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<SpawnedProcess> {
  return spawnCommandIn(t, CLI, command, env, ready);
}

/** Runs a command of the `cauri` entry point at `cli` (an installed package's, say) until `ready` matches its output. */
export async function spawnCommandIn(
  t: TestContext,
  cli: string,
  command: string | string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<SpawnedProcess> {
  const child = spawn(process.execPath, [cli, ...(typeof command === 'string' ? [command] : command)], {
    // Tests on real time run at any hour: the simulated exchange trades at any hour unless a test says
    // otherwise. No load balancer waits for these processes to fail readiness: they stop at once.
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', CAURI_SANDBOX_MARKET_HOURS: 'always', CAURI_SHUTDOWN_DELAY_SECONDS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    child.kill('SIGTERM');
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 60_000);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve({ base: match[1] as string, pid: child.pid ?? 0, output: () => output, stop, exited: () => exited });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  });
}

/**
 * Runs a `cauri` command to completion (with `input` on its standard input) and returns its output.
 * `stdout: 'closed'` closes the reading end of its standard output at once, as a reader that stops
 * early does (`cauri ... | head -1`).
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  input?: string,
  stdout: 'read' | 'closed' = 'read',
): Promise<{ code: number; stdout: string; stderr: string }> {
  // English unless the test names a locale, whatever the developer's own is (docs/cli.md#languages).
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', LC_ALL: '', LC_MESSAGES: '', LANG: 'C.UTF-8', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(input);
  let out = '';
  let stderr = '';
  if (stdout === 'closed') child.stdout?.destroy();
  else child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  return { code, stdout: out, stderr };
}
