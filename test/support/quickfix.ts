import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';

/**
 * QuickFIX's `executor` example (Debian's libquickfix-doc, QuickFIX C++ 1.15) as an independent FIX
 * 4.4 counterparty: an acceptor that fills every order it takes at once. The test set-up installs
 * nothing: `.ci/run` installs the Debian packages. QuickFIX acceptors listen on every address, so
 * they only ever run inside a network namespace that has nothing but loopback (loopback.ts).
 */

const EXAMPLE = '/usr/share/doc/libquickfix-doc/examples/executor/C++';
const SHIPPED = `${EXAMPLE}/.libs/executor.gz`;
export const FIX44_DICTIONARY = join(dirname(createRequire(import.meta.url).resolve('jspurefix/package.json')), 'data', 'FIX44.xml');

const binaries = new Map<ExecutorKind, string>();

/**
 * `stock`: the binary Debian ships, which fills limit orders and refuses market orders (a
 * session-level Reject of OrdType). `market-fills`: the same example built from its shipped sources
 * with one change to its FIX 4.4 handler: a market order is filled too, at the price in the
 * environment variable EXECUTOR_MARKET_PRICE. Each is made once per process, in a temporary folder.
 */
export type ExecutorKind = 'stock' | 'market-fills';

function executorBinary(kind: ExecutorKind): string {
  const made = binaries.get(kind);
  if (made !== undefined) return made;
  if (!existsSync(SHIPPED))
    throw new Error(`${SHIPPED} is missing: install the Debian packages libquickfix-dev libquickfix-doc g++ pkg-config (see .ci/run)`);
  const dir = mkdtempSync(join(tmpdir(), 'cauri-quickfix-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'executor');
  if (kind === 'stock') {
    writeFileSync(path, execFileSync('zcat', [SHIPPED], { maxBuffer: 64 * 1024 * 1024 }), { mode: 0o755 });
  } else {
    writeFileSync(
      join(dir, 'Application.cpp'),
      withMarketFills(execFileSync('zcat', [`${EXAMPLE}/Application.cpp.gz`], { encoding: 'utf8' })),
    );
    copyFileSync(`${EXAMPLE}/Application.h`, join(dir, 'Application.h'));
    copyFileSync(`${EXAMPLE}/executor.cpp`, join(dir, 'executor.cpp'));
    writeFileSync(join(dir, 'config.h'), '');
    const flags = (args: string[]) =>
      execFileSync('pkg-config', args, { encoding: 'utf8' })
        .trim()
        .split(/\s+/)
        .filter((f) => f !== '');
    execFileSync(
      'g++',
      [
        '-std=gnu++14',
        '-w',
        '-I.',
        ...flags(['--cflags', 'quickfix']),
        '-o',
        'executor',
        'executor.cpp',
        'Application.cpp',
        ...flags(['--libs', 'quickfix']),
        '-lpthread',
      ],
      { cwd: dir, stdio: 'pipe' },
    );
  }
  binaries.set(kind, path);
  return path;
}

/** The example's FIX 4.4 NewOrderSingle handler, taught to fill market orders. */
function withMarketFills(source: string): string {
  const start = source.indexOf('void Application::onMessage( const FIX44::NewOrderSingle&');
  const end = source.indexOf('void Application::onMessage(', start + 1);
  const handler = source.slice(start, end);
  const patched = handler
    .replace('if ( ordType != FIX::OrdType_LIMIT )', 'if ( ordType != FIX::OrdType_LIMIT && ordType != FIX::OrdType_MARKET )')
    .replace(
      'message.get( price );',
      'if ( ordType == FIX::OrdType_MARKET ) price = FIX::Price( atof( getenv( "EXECUTOR_MARKET_PRICE" ) ) ); else message.get( price );',
    );
  if (start < 0 || end < 0 || patched === handler || patched.split('OrdType_MARKET').length !== 3)
    throw new Error("the executor example's sources are not the ones this test knows how to change");
  return `${source.slice(0, start)}${patched}${source.slice(end)}`;
}

/** Refuses to go on unless the only network interface is loopback. */
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

/**
 * The executor as a TLS acceptor (QuickFIX's threaded SSL acceptor, which Debian's build has): its
 * certificate and key, and the authorities a client certificate must chain to. It requires a client
 * certificate and verifies it. Paths to PEM files.
 */
export interface ExecutorTls {
  cert: string;
  key: string;
  clientCa: string;
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
  /** Everything the executor wrote (its events, TLS handshakes included). */
  output(): string;
  /** Stops the executor (its file store stays, so a restart keeps the sequence numbers). */
  stop(): Promise<void>;
  /** Freezes the executor (SIGSTOP): its connections stay open and it answers nothing until resumed (SIGCONT). */
  pause(): void;
  resume(): void;
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
 * Runs an executor accepting the FIX 4.4 session SenderCompID `EXEC` <- TargetCompID `CAURI` on
 * 127.0.0.1:`port`, with its store in a temporary folder removed after the test.
 */
export async function startExecutor(
  t: TestContext,
  port: number,
  options: { kind?: ExecutorKind; marketPrice?: string; tls?: ExecutorTls } = {},
): Promise<Executor> {
  if (options.tls !== undefined && (options.kind ?? 'stock') !== 'stock') throw new Error('only the shipped executor is built with TLS');
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
      ...(options.tls === undefined
        ? []
        : [
            `ServerCertificateFile=${options.tls.cert}`,
            `ServerCertificateKeyFile=${options.tls.key}`,
            `CertificationAuthoritiesFile=${options.tls.clientCa}`,
            'CertificateVerifyLevel=1',
          ]),
      '[SESSION]',
      'BeginString=FIX.4.4',
      'SenderCompID=EXEC',
      'TargetCompID=CAURI',
      '',
    ].join('\n'),
  );
  let output = '';
  let child: ReturnType<typeof spawn> | null = null;
  const executor: Executor = {
    port,
    output: () => output,
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
      const started = spawn(executorBinary(options.kind ?? 'stock'), options.tls === undefined ? [settings] : [settings, 'SSL'], {
        cwd: dir,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, EXECUTOR_MARKET_PRICE: options.marketPrice ?? '0' },
      });
      started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('latin1')));
      started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('latin1')));
      child = started;
      await waitForPort(port, Date.now() + 10_000);
    },
    pause: () => {
      (child as ReturnType<typeof spawn> | null)?.kill('SIGSTOP');
    },
    resume: () => {
      (child as ReturnType<typeof spawn> | null)?.kill('SIGCONT');
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
