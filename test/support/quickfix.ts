import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import {
  QUICKFIX_EXAMPLES,
  QUICKFIX_PACKAGES,
  SHIPPED_EXECUTOR,
  assertLoopbackOnly,
  compileProgram,
  parseScreenLog,
  quickfixFlags,
  unpackShippedExecutor,
  waitForListening,
  writeAcceptorSettings,
  type FixMessage,
} from './quickfix-program.js';

export { FIX44_DICTIONARY, assertLoopbackOnly, type FixMessage } from './quickfix-program.js';

/**
 * QuickFIX's `executor` example (Debian's libquickfix-doc, QuickFIX C++ 1.15) as an independent FIX
 * 4.4 counterparty: an acceptor that fills every order it takes at once (quickfix-program.ts has
 * what it shares with the other QuickFIX programs). It runs only inside a network namespace that has
 * nothing but loopback (loopback.ts).
 */

const EXAMPLE = `${QUICKFIX_EXAMPLES}/executor/C++`;

const binaries = new Map<ExecutorKind, Promise<string>>();

/**
 * `stock`: the binary Debian ships, which fills limit orders and refuses market orders (a
 * session-level Reject of OrdType). `market-fills`: the same example built from its shipped sources
 * with one change to its FIX 4.4 handler: a market order is filled too, at the price in the
 * environment variable EXECUTOR_MARKET_PRICE. Each is made once per process, in a temporary folder.
 */
export type ExecutorKind = 'stock' | 'market-fills';

function executorBinary(kind: ExecutorKind): Promise<string> {
  let made = binaries.get(kind);
  if (made === undefined) {
    made = buildExecutor(kind);
    binaries.set(kind, made);
  }
  return made;
}

async function buildExecutor(kind: ExecutorKind): Promise<string> {
  if (!existsSync(SHIPPED_EXECUTOR))
    throw new Error(`${SHIPPED_EXECUTOR} is missing: install the Debian packages ${QUICKFIX_PACKAGES} (see .ci/run)`);
  const dir = mkdtempSync(join(tmpdir(), 'cauri-quickfix-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'executor');
  if (kind === 'stock') {
    unpackShippedExecutor(path);
  } else {
    writeFileSync(
      join(dir, 'Application.cpp'),
      withMarketFills(execFileSync('zcat', [`${EXAMPLE}/Application.cpp.gz`], { encoding: 'utf8' })),
    );
    copyFileSync(`${EXAMPLE}/Application.h`, join(dir, 'Application.h'));
    copyFileSync(`${EXAMPLE}/executor.cpp`, join(dir, 'executor.cpp'));
    await compileProgram(dir, ['executor', 'Application'], 'executor', await quickfixFlags());
  }
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
  const settings = writeAcceptorSettings(dir, 'executor.cfg', {
    port,
    senderCompId: 'EXEC',
    extra:
      options.tls === undefined
        ? []
        : [
            `ServerCertificateFile=${options.tls.cert}`,
            `ServerCertificateKeyFile=${options.tls.key}`,
            `CertificationAuthoritiesFile=${options.tls.clientCa}`,
            'CertificateVerifyLevel=1',
          ],
  });
  let output = '';
  let child: ReturnType<typeof spawn> | null = null;
  const executor: Executor = {
    port,
    output: () => output,
    messages: () => parseScreenLog(output),
    start: async () => {
      const started = spawn(await executorBinary(options.kind ?? 'stock'), options.tls === undefined ? [settings] : [settings, 'SSL'], {
        cwd: dir,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, EXECUTOR_MARKET_PRICE: options.marketPrice ?? '0' },
      });
      started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('latin1')));
      started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('latin1')));
      child = started;
      await waitForListening(port, 'executor');
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
