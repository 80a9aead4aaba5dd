import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

/**
 * A local anvil node (Foundry's development chain) for tests: the "local node of that chain" the
 * EVM anchor is tested against (docs/audit.md). Test support only: the binary comes from the dev
 * optional dependency @foundry-rs/anvil-linux-amd64 (the platform package of Foundry's npm release), which holds
 * it. The binary is started directly rather than through the package's bin.mjs wrapper, so that
 * stopping the child stops anvil and not only a wrapper.
 */
export interface LocalAnvil {
  readonly rpcUrl: string;
  readonly port: number;
  readonly chainId: number;
  /** One JSON-RPC call; throws on an error answer. For anvil_* and evm_* test controls. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** What anvil printed, the last 64 KiB, for failure messages. */
  output(): string;
  /** Stops anvil (SIGTERM, then SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartAnvilOptions {
  /** Default 31337, anvil's own. */
  readonly chainId?: number;
  /** How long to wait for the node to answer. Default 20 s: CI machines are slow to start a 40 MB binary. */
  readonly startupTimeoutMs?: number;
  /** Path of an anvil binary, instead of the one from node_modules. */
  readonly binary?: string;
  /** More command-line arguments, such as ['--hardfork', 'berlin'] for a chain without EIP-1559. */
  readonly args?: readonly string[];
}

const PLATFORM_PACKAGE: Readonly<Record<string, string>> = {
  'linux-x64': 'linux-amd64',
  'linux-arm64': 'linux-arm64',
  'darwin-x64': 'darwin-amd64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-amd64',
};

/** The anvil binary installed by @foundry-rs/anvil; throws, saying why, when there is none for this machine. */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const name = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const suffix = PLATFORM_PACKAGE[`${process.platform}-${process.arch}`];
  if (suffix === undefined) throw new Error(`anvil: no @foundry-rs/anvil build for ${process.platform}-${process.arch}`);
  try {
    return require.resolve(`@foundry-rs/anvil-${suffix}/bin/${name}`);
  } catch {
    // The wrapper's postinstall downloads the binary next to itself when the optional platform
    // package was not installed; bin.mjs looks there second, and so does this.
    try {
      const fallback = join(dirname(require.resolve('@foundry-rs/anvil/package.json')), '..', 'dist', name);
      if (existsSync(fallback)) return fallback;
    } catch {
      // Not installed at all: reported below.
    }
  }
  throw new Error(
    `anvil: neither @foundry-rs/anvil-${suffix} nor a downloaded binary is installed; run npm install (dev dependencies included)`,
  );
}

const MAX_OUTPUT = 64 * 1024;

export async function startAnvil(options: StartAnvilOptions = {}): Promise<LocalAnvil> {
  const binary = options.binary ?? anvilBinary();
  const chainId = options.chainId ?? 31337;
  const timeoutMs = options.startupTimeoutMs ?? 20_000;
  // The port comes from the kernel (bind to 0, release it); anvil may still lose a race for it to
  // another process, which shows as an early exit saying "in use", and is retried on a new port.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(binary, ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), ...(options.args ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const node = new AnvilProcess(child, port, chainId);
    const outcome = await node.ready(timeoutMs);
    if (outcome === 'ready') return node;
    await node.stop();
    if (outcome === 'port-in-use' && attempt < 5) continue;
    throw new Error(`anvil (${binary}) did not start on 127.0.0.1:${port}: ${outcome}\n--- anvil output ---\n${node.output()}`);
  }
}

class AnvilProcess implements LocalAnvil {
  readonly rpcUrl: string;
  #log = '';
  #exited: Promise<void>;
  #exit: string | null = null;
  #spawnError: Error | null = null;
  readonly #killOnExit = () => this.child.kill('SIGKILL');

  constructor(
    readonly child: ChildProcess,
    readonly port: number,
    readonly chainId: number,
  ) {
    this.rpcUrl = `http://127.0.0.1:${port}`;
    const append = (chunk: Buffer) => {
      this.#log = (this.#log + chunk.toString('utf8')).slice(-MAX_OUTPUT);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    // If the test process ends without stop() (a failed test that never reached it, process.exit),
    // anvil must not outlive it; and a forgotten stop() must not keep the process alive, so the
    // child and its pipes do not hold the event loop open.
    process.once('exit', this.#killOnExit);
    child.unref();
    for (const stream of [child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
    this.#exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.#spawnError = err;
        this.#exit ??= `could not be run: ${err.message}`;
        resolve();
      });
      child.once('exit', (code, signal) => {
        this.#exit ??= `exited with ${signal ?? `code ${code}`}`;
        resolve();
      });
    });
  }

  /**
   * Waits until this child says it listens and the port answers eth_chainId with our id. Resolves
   * 'ready', 'port-in-use', or why it failed.
   */
  async ready(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    // Our own "Listening on" line is required as well as an answer: after losing a port race the
    // answer could come from the other process.
    const listening = `Listening on 127.0.0.1:${this.port}`;
    while (Date.now() < deadline) {
      if (this.#exit !== null) return /in use/i.test(this.#log) ? 'port-in-use' : this.#exit;
      if (this.#log.includes(listening)) {
        try {
          const id = await this.rpc<string>('eth_chainId');
          if (Number(id) === this.chainId) return 'ready';
          return `answered chain id ${id}, expected ${this.chainId}`;
        } catch {
          // Not accepting yet.
        }
      }
      await Promise.race([new Promise((r) => setTimeout(r, 100)), this.#exited]);
    }
    return `no answer within ${timeoutMs} ms`;
  }

  async rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const res = await fetch(this.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error !== undefined) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
    return body.result as T;
  }

  output(): string {
    return this.#log;
  }

  async stop(): Promise<void> {
    process.removeListener('exit', this.#killOnExit);
    if (this.#exit !== null || this.#spawnError !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.#exited;
    clearTimeout(timer);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}
