import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A server under test, in its own OS process. */
export interface ServerProcess {
  readonly name: string;
  readonly base: string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();

/** Kills every child still running (last resort on exit or a signal; stop() is the normal path). */
export function killAllChildren(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  live.clear();
}

/** A TCP port free at the time of the call on 127.0.0.1 (the service logs its address only at info level). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

interface SpawnOptions {
  name: string;
  script: string;
  args?: string[];
  env: Record<string, string>;
  cwd?: string;
  nodeArgs?: string[];
  /** How to learn the base URL: from a stdout line `"address":"http://..."`, or by polling `base + path`. */
  ready: { kind: 'address-line' } | { kind: 'poll'; base: string; path: string } | { kind: 'line'; pattern: RegExp };
  timeoutMs?: number;
}

export async function spawnServer(options: SpawnOptions): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  live.add(child);
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (graceMs = 10_000): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    live.delete(child);
  };
  const keep = (chunk: Buffer) => {
    // Keep the start of the output for error messages, but do not grow without bound under load.
    if (output.length < 64_000) output += chunk.toString();
  };
  child.stderr.on('data', keep);

  try {
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${options.name} did not start within ${options.timeoutMs ?? 30_000} ms:\n${output}`)),
        options.timeoutMs ?? 30_000,
      );
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${options.name} exited with ${code ?? signal} before listening:\n${output}`));
      });
      child.stdout.on('data', (chunk: Buffer) => {
        keep(chunk);
        if (options.ready.kind === 'line') {
          if (options.ready.pattern.test(output)) {
            clearTimeout(timer);
            resolve('');
          }
          return;
        }
        if (options.ready.kind !== 'address-line') return;
        const match = /"address":"(http:\/\/[^"]+)"/.exec(output);
        if (match !== null) {
          clearTimeout(timer);
          resolve(match[1] as string);
        }
      });
      if (options.ready.kind === 'poll') {
        const { base, path } = options.ready;
        const poll = async (): Promise<void> => {
          while (child.exitCode === null) {
            try {
              const res = await fetch(`${base}${path}`);
              await res.arrayBuffer();
              if (res.ok) {
                clearTimeout(timer);
                resolve(base);
                return;
              }
            } catch {
              // not listening yet
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        };
        void poll();
      }
    });
    return { name: options.name, base, pid: child.pid ?? 0, stop };
  } catch (error) {
    await stop(1000);
    throw error;
  }
}

/** Runs a command to completion; throws with its output if it fails. */
export async function runNode(script: string, args: string[], env: Record<string, string>, cwd?: string): Promise<string> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd === undefined ? {} : { cwd }),
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  live.delete(child);
  if (code !== 0) throw new Error(`node ${script} ${args.join(' ')} exited with ${code}:\n${stderr}${stdout}`);
  return stdout;
}
