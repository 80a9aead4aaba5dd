import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';

/**
 * QuickFIX's `executor` example (Debian's libquickfix-doc, QuickFIX C++ 1.15) as an independent FIX
 * 4.4 counterparty: an acceptor that fills every limit order at once. The test set-up installs
 * nothing: `.ci/run` installs the Debian packages. QuickFIX acceptors listen on every address, so
 * they only ever run inside a network namespace that has nothing but loopback (loopback.ts).
 */

const SHIPPED = '/usr/share/doc/libquickfix-doc/examples/executor/C++/.libs/executor.gz';
export const FIX44_DICTIONARY = join(dirname(createRequire(import.meta.url).resolve('jspurefix/package.json')), 'data', 'FIX44.xml');

let binary: string | undefined;

/** The executor binary, extracted once per process into a temporary folder. */
function executorBinary(): string {
  if (binary !== undefined) return binary;
  if (!existsSync(SHIPPED)) throw new Error(`${SHIPPED} is missing: install the Debian packages libquickfix-dev libquickfix-doc (see .ci/run)`);
  const dir = mkdtempSync(join(tmpdir(), 'cauri-quickfix-'));
  const path = join(dir, 'executor');
  writeFileSync(path, execFileSync('zcat', [SHIPPED], { maxBuffer: 64 * 1024 * 1024 }), { mode: 0o755 });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  binary = path;
  return path;
}

/** Refuses to go on unless the only network interface is loopback. */
export function assertLoopbackOnly(): void {
  const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout.trim().split('\n').map((l) => l.split(':')[1]?.trim());
  if (links.length !== 1 || links[0] !== 'lo') throw new Error(`QuickFIX acceptors listen on every address; refusing to start one outside a loopback-only network namespace (interfaces: ${links.join(', ')})`);
}

export interface FixMessage {
  direction: 'incoming' | 'outgoing';
  /** The message with `|` for SOH. */
  text: string;
  fields: Map<number, string>;
}

export interface Executor {
  readonly port: number;
  /** What the executor logged: its messages, as it saw them. */
  messages(): FixMessage[];
  /** Stops the executor (its file store stays, so a restart keeps the sequence numbers). */
  stop(): Promise<void>;
  start(): Promise<void>;
}

function waitForPort(port: number, deadline: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve();
      });
      socket.on('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`executor did not listen on ${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/**
 * Runs an executor accepting the FIX 4.4 session SenderCompID `EXEC` <- TargetCompID `initiator`
 * on 127.0.0.1:`port`, with its store and log in a temporary folder removed after the test.
 */
export async function startExecutor(t: TestContext, port: number, initiator = 'CAURI'): Promise<Executor> {
  assertLoopbackOnly();
  const dir = mkdtempSync(join(tmpdir(), 'cauri-executor-'));
  mkdirSync(join(dir, 'store'));
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
      `DataDictionary=${FIX44_DICTIONARY}`,
      '[SESSION]',
      'BeginString=FIX.4.4',
      'SenderCompID=EXEC',
      `TargetCompID=${initiator}`,
      '',
    ].join('\n'),
  );
  let output = '';
  let child: ReturnType<typeof spawn> | null = null;
  const executor: Executor = {
    port,
    messages: () => {
      const found: FixMessage[] = [];
      for (const match of output.matchAll(/, (incoming|outgoing)>\s*\n\s*\((8=FIX[^\n]*?)\)\n/g)) {
        const text = (match[2] ?? '').replaceAll('\x01', '|');
        const fields = new Map<number, string>();
        for (const part of text.split('|')) {
          const eq = part.indexOf('=');
          if (eq > 0) fields.set(Number(part.slice(0, eq)), part.slice(eq + 1));
        }
        found.push({ direction: match[1] as 'incoming' | 'outgoing', text, fields });
      }
      return found;
    },
    start: async () => {
      const started = spawn(executorBinary(), [settings], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
      started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('latin1')));
      started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('latin1')));
      child = started;
      await waitForPort(port, Date.now() + 10_000);
    },
    stop: async () => {
      const running = child;
      child = null;
      if (running === null || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
  };
  t.after(async () => {
    await executor.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  await executor.start();
  return executor;
}
