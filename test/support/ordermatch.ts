import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  QUICKFIX_EXAMPLES,
  QUICKFIX_PACKAGES,
  assertLoopbackOnly,
  compileProgram,
  parseScreenLog,
  quickfixFlags,
  tool,
  waitForListening,
  writeAcceptorSettings,
  type FixMessage,
} from './quickfix-program.js';

/**
 * QuickFIX's `ordermatch` example as an independent FIX 4.4 counterparty: a real order book per
 * symbol (resting limit orders, market orders, crossing, partial fills, cancels, cancel/replace).
 * Debian ships it for FIX 4.2 only; the port to FIX 4.4 is in test/fix/ordermatch/ (Application.h
 * and Application.cpp, and book.patch for the example's other files). It is built here from the
 * package's sources with g++, once per content (cached in the temporary folder under a hash of
 * everything that goes into it). What it shares with the other QuickFIX programs is in
 * quickfix-program.ts.
 */

const EXAMPLE = `${QUICKFIX_EXAMPLES}/ordermatch`;
/** The example's files the port keeps, changed by book.patch (Application.h and .cpp are the port's). */
const EXAMPLE_FILES = ['IDGenerator.h', 'Market.cpp', 'Market.h', 'Order.h', 'OrderMatcher.h', 'ordermatch.cpp'];
const PORT = fileURLToPath(new URL('../../../test/fix/ordermatch/', import.meta.url));
const PORT_FILES = ['Application.h', 'Application.cpp', 'book.patch'];
let built: Promise<string> | null = null;

/** The ordermatch binary: built from the package's sources and the port, or found in the cache. */
export function orderMatchBinary(): Promise<string> {
  built ??= build();
  return built;
}

async function build(): Promise<string> {
  for (const file of EXAMPLE_FILES) {
    if (!existsSync(join(EXAMPLE, file)))
      throw new Error(`${join(EXAMPLE, file)} is missing: install the Debian packages ${QUICKFIX_PACKAGES} (see .ci/run)`);
  }
  const flags = await quickfixFlags();
  const { cflags, libs } = flags;
  const [compiler, quickfix] = await Promise.all([tool('g++', ['-dumpfullversion']), tool('pkg-config', ['--modversion', 'quickfix'])]);
  await tool('patch', ['--version']);

  const hash = createHash('sha256').update(`g++ ${compiler}\nquickfix ${quickfix}\n${cflags}\n${libs}\n`);
  for (const [dir, files] of [
    [EXAMPLE, EXAMPLE_FILES],
    [PORT, PORT_FILES],
  ] as const) {
    for (const file of files)
      hash
        .update(`${file}\n`)
        .update(readFileSync(join(dir, file)))
        .update('\n');
  }
  const cached = join(tmpdir(), `cauri-ordermatch-${hash.digest('hex').slice(0, 16)}`);
  const binary = join(cached, 'ordermatch');
  if (existsSync(binary)) return binary;

  const dir = mkdtempSync(join(tmpdir(), 'cauri-ordermatch-build-'));
  try {
    for (const file of EXAMPLE_FILES) copyFileSync(join(EXAMPLE, file), join(dir, file));
    await tool('patch', ['-p1', '--quiet', '--input', join(PORT, 'book.patch')], dir);
    for (const file of ['Application.h', 'Application.cpp']) copyFileSync(join(PORT, file), join(dir, file));
    // The three units compile side by side, then link.
    await compileProgram(dir, ['ordermatch', 'Application', 'Market'], 'ordermatch', flags);
    try {
      renameSync(dir, cached);
    } catch (error) {
      // Built meanwhile by another run: use that one.
      if (!existsSync(binary)) throw error;
      rmSync(dir, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return binary;
}

export interface OrderMatch {
  readonly port: number;
  /** SenderCompID of the gateway; its TargetCompID is `CAURI`. */
  readonly compId: string;
  /** Every message the gateway logged, as it saw it (incoming and outgoing), oldest first. */
  messages(): FixMessage[];
  /**
   * Makes the gateway send the ExecutionReport that had ExecID `execId` again, as a new message
   * with the same ExecID, or (`possDup`) marked PossDupFlag (43) = Y with OrigSendingTime (122).
   */
  repeat(execId: string, options?: { possDup?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

async function waitUntil(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Runs the FIX 4.4 ordermatch accepting the session SenderCompID `MATCH` <- TargetCompID `CAURI` on
 * 127.0.0.1:`port`; `symbols` are the symbols it trades (an order for any other is rejected with
 * OrdRejReason 1 and Text "Unknown symbol ..."). Stopped, its folder removed, after the test.
 */
export async function startOrderMatch(t: TestContext, port: number, symbols: readonly string[]): Promise<OrderMatch> {
  assertLoopbackOnly();
  const binary = await orderMatchBinary();
  const dir = mkdtempSync(join(tmpdir(), 'cauri-ordermatch-run-'));
  mkdirSync(join(dir, 'store'));
  const compId = 'MATCH';
  const settings = writeAcceptorSettings(dir, 'ordermatch.cfg', { port, senderCompId: compId });
  let stdout = '';
  let stderr = '';
  // Standard input stays open: the gateway reads commands from it and ends with it.
  const child: ChildProcess = spawn(binary, [settings, ...symbols], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('latin1')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('latin1')));
  child.on('error', (error) => (stderr += `\n${String(error)}`));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gateway: OrderMatch = {
    port,
    compId,
    messages: () => parseScreenLog(stdout),
    async repeat(execId, options = {}) {
      const before = stderr.length;
      child.stdin?.write(`#repeat ${execId}${options.possDup === true ? ' possdup' : ''}\n`);
      await waitUntil(`ordermatch to repeat ${execId}`, () => stderr.slice(before).includes(`${execId}\n`), 5000);
      if (!stderr.slice(before).includes(`repeated ${execId}\n`))
        throw new Error(`ordermatch sent no report with ExecID ${execId}: ${stderr.slice(before)}`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  t.after(async () => {
    await gateway.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  await waitForListening(port, 'ordermatch', {
    gone: () => (child.exitCode === null ? null : `ordermatch exited (${child.exitCode}): ${stdout}${stderr}`),
    detail: () => `: ${stdout}${stderr}`,
  });
  return gateway;
}
