import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * QuickFIX's `executor` example (Debian's libquickfix-doc) as the SGI's gateway of the FIX scenario:
 * an acceptor that fills every limit order at once, at its limit. Its SenderCompID is `EXEC`, the
 * service's `CAURI`. QuickFIX acceptors listen on every address: this runs only in a network
 * namespace whose one interface is loopback.
 */

const SHIPPED = '/usr/share/doc/libquickfix-doc/examples/executor/C++/.libs/executor.gz';
const DICTIONARY = join(dirname(createRequire(import.meta.url).resolve('jspurefix/package.json')), 'data', 'FIX44.xml');

export interface RunningExecutor {
  readonly port: number;
  stop(): Promise<void>;
}

export function assertLoopbackOnly(): void {
  const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
    .map((l) => l.split(':')[1]?.trim());
  if (links.length !== 1 || links[0] !== 'lo')
    throw new Error(
      `QuickFIX acceptors listen on every address; refusing to start one outside a loopback-only network namespace (interfaces: ${links.join(', ')})`,
    );
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`the executor did not listen on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts the executor on 127.0.0.1:`port` with its file store in a temporary folder. */
export async function startExecutor(port: number): Promise<RunningExecutor> {
  assertLoopbackOnly();
  if (!existsSync(SHIPPED)) throw new Error(`${SHIPPED} is missing: install the Debian packages libquickfix-dev libquickfix-doc`);
  const dir = mkdtempSync(join(tmpdir(), 'cauri-bench-executor-'));
  mkdirSync(join(dir, 'store'));
  const binary = join(dir, 'executor');
  writeFileSync(binary, execFileSync('zcat', [SHIPPED], { maxBuffer: 64 * 1024 * 1024 }), { mode: 0o755 });
  const settings = join(dir, 'executor.cfg');
  writeFileSync(
    settings,
    [
      '[DEFAULT]',
      'ConnectionType=acceptor',
      `SocketAcceptPort=${port}`,
      `FileStorePath=${join(dir, 'store')}`,
      'StartTime=00:00:00',
      'EndTime=00:00:00',
      'UseDataDictionary=Y',
      `DataDictionary=${DICTIONARY}`,
      '[SESSION]',
      'BeginString=FIX.4.4',
      'SenderCompID=EXEC',
      'TargetCompID=CAURI',
      '',
    ].join('\n'),
  );
  // Its screen log (every message) is read by nobody: sent to /dev/null so that it costs no pipe.
  const child: ChildProcess = spawn(binary, [settings], { cwd: dir, stdio: ['pipe', 'ignore', 'ignore'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(port, Date.now() + 10_000);
  return {
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
