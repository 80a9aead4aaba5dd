import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';

const run = promisify(execFile);

/** The newest installed PostgreSQL's binaries (`/usr/lib/postgresql/<major>/bin`). */
function binaries(): string {
  const root = '/usr/lib/postgresql';
  let majors: string[];
  try {
    majors = readdirSync(root).filter((name) => /^\d+$/.test(name));
  } catch {
    throw new Error(`no PostgreSQL installed under ${root}: the fault tests start a server of their own`);
  }
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error(`no PostgreSQL version under ${root}`);
  return join(root, newest, 'bin');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The uid and gid of the `postgres` OS user, who owns the cluster (the server refuses to run as root). */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/**
 * A PostgreSQL server of the test's own: a new cluster in a temporary folder, on a free loopback
 * port, trusting local connections. The test can stop it abruptly (`pg_ctl stop -m immediate`, as a
 * crash: committed transactions survive through the write-ahead log) and start it again on the same
 * port without touching any other server. Removed when the test ends. Starting it fails the test
 * (never skips it) when it cannot be done.
 */
export class OwnPostgres {
  readonly #bin: string;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    this.#bin = binaries();
  }

  static async start(t: TestContext): Promise<OwnPostgres> {
    const user = await postgresUser();
    const dir = mkdtempSync(join(tmpdir(), 'cauri-pg-'));
    chownSync(dir, user.uid, user.gid);
    const server = new OwnPostgres(dir, await freePort());
    t.after(async () => {
      await server.#pgCtl(['stop', '-m', 'immediate']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    });
    await server.#asPostgres(join(server.#bin, 'initdb'), [
      '-D',
      join(dir, 'data'),
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    await server.restart();
    return server;
  }

  /** The server's URL for `database` (the cluster's default one unless given). */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server (again) and waits until it accepts connections. */
  async restart(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c max_connections=100 -c shared_buffers=32MB`;
    await this.#pgCtl(['start', '-w', '-t', '30', '-l', join(this.dir, 'server.log'), '-o', options]);
  }

  /** Stops the server at once, as a crash does: every connection drops, nothing is shut down cleanly. */
  async crash(): Promise<void> {
    await this.#pgCtl(['stop', '-m', 'immediate', '-w']);
  }

  async #pgCtl(args: string[]): Promise<void> {
    await this.#asPostgres(join(this.#bin, 'pg_ctl'), ['-D', join(this.dir, 'data'), ...args]);
  }

  async #asPostgres(command: string, args: string[]): Promise<void> {
    try {
      await run('runuser', ['-u', 'postgres', '--', command, ...args], { cwd: this.dir, timeout: 60_000 });
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  }
}
