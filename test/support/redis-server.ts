import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';
import type { TestContext } from 'node:test';

/** Whether a `redis-server` binary is on the PATH (tests that stop Redis start their own). */
export const redisServerAvailable = spawnSync('redis-server', ['--version']).status === 0;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A Redis server of the test's own, on a free loopback port, without persistence: the test can kill,
 * pause and restart it without touching any other Redis. Stopped when the test ends.
 */
export class OwnRedis {
  #child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(t: TestContext): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort());
    t.after(() => redis.kill());
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again) on the same port, empty, and waits until it accepts connections. */
  async restart(): Promise<void> {
    if (this.#child !== null) throw new Error('redis-server is already running');
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    this.#child = child;
    child.once('exit', () => {
      if (this.#child === child) this.#child = null;
    });
    const deadline = Date.now() + 10_000;
    while (!(await accepting(this.port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${this.port}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGKILL: connections drop at once, as when the host or the process dies. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGSTOP / SIGCONT: connections stay open but nothing answers, as behind a network partition. */
  pause(): void {
    this.#child?.kill('SIGSTOP');
  }

  resume(): void {
    this.#child?.kill('SIGCONT');
  }
}
