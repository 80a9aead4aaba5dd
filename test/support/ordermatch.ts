import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FIX44_DICTIONARY, assertLoopbackOnly, type FixMessage } from './quickfix.js';

/**
 * QuickFIX's `ordermatch` example as an independent FIX 4.4 counterparty: a real order book per
 * symbol (resting limit orders, market orders, crossing, partial fills, cancels, cancel/replace).
 * Debian ships it for FIX 4.2 only; the port to FIX 4.4 is in test/fix/ordermatch/ (Application.h
 * and Application.cpp, and book.patch for the example's other files). It is built here from the
 * package's sources with g++, once per content (cached in the temporary folder under a hash of
 * everything that goes into it). The test set-up installs nothing: `.ci/run` installs the Debian
 * packages, and a missing one fails the tests with its name.
 */

const EXAMPLE = '/usr/share/doc/libquickfix-doc/examples/ordermatch';
/** The example's files the port keeps, changed by book.patch (Application.h and .cpp are the port's). */
const EXAMPLE_FILES = ['IDGenerator.h', 'Market.cpp', 'Market.h', 'Order.h', 'OrderMatcher.h', 'ordermatch.cpp'];
const PORT = fileURLToPath(new URL('../../../test/fix/ordermatch/', import.meta.url));
const PORT_FILES = ['Application.h', 'Application.cpp', 'book.patch'];
const PACKAGES = 'libquickfix-dev libquickfix-doc g++ pkg-config patch';

const run = promisify(execFile);

async function tool(command: string, args: string[], cwd?: string): Promise<string> {
  try {
    return (
      await run(command, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, ...(cwd === undefined ? {} : { cwd }) })
    ).stdout.trim();
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error(`${command} is missing: install the Debian packages ${PACKAGES} (see .ci/run)`);
    throw new Error(`${command} ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

let built: Promise<string> | null = null;

/** The ordermatch binary: built from the package's sources and the port, or found in the cache. */
export function orderMatchBinary(): Promise<string> {
  built ??= build();
  return built;
}

async function build(): Promise<string> {
  for (const file of EXAMPLE_FILES) {
    if (!existsSync(join(EXAMPLE, file)))
      throw new Error(`${join(EXAMPLE, file)} is missing: install the Debian packages ${PACKAGES} (see .ci/run)`);
  }
  await tool('pkg-config', ['--exists', 'quickfix']).catch((error: Error) => {
    throw new Error(
      `QuickFIX's development files are missing (pkg-config quickfix): install the Debian packages ${PACKAGES} (see .ci/run)\n${error.message}`,
    );
  });
  const [compiler, quickfix, cflags, libs] = await Promise.all([
    tool('g++', ['-dumpfullversion']),
    tool('pkg-config', ['--modversion', 'quickfix']),
    tool('pkg-config', ['--cflags', 'quickfix']),
    tool('pkg-config', ['--libs', 'quickfix']),
  ]);
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
    writeFileSync(join(dir, 'config.h'), '');
    const words = (flags: string) => flags.split(/\s+/).filter((f) => f !== '');
    // gnu++14: QuickFIX's headers use dynamic exception specifications, which C++17 removed. The
    // three units compile side by side, then link.
    const units = ['ordermatch', 'Application', 'Market'];
    await Promise.all(
      units.map((unit) => tool('g++', ['-std=gnu++14', '-w', '-I.', ...words(cflags), '-c', `${unit}.cpp`, '-o', `${unit}.o`], dir)),
    );
    await tool('g++', ['-o', 'ordermatch', ...units.map((unit) => `${unit}.o`), ...words(libs), '-lpthread'], dir);
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

/** The gateway's ScreenLog on standard output: `<time, session, incoming|outgoing>` then `  (message)`. */
function parseScreenLog(output: string): FixMessage[] {
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
}

async function waitUntil(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
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
  const settings = join(dir, 'ordermatch.cfg');
  const compId = 'MATCH';
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
      `SenderCompID=${compId}`,
      'TargetCompID=CAURI',
      '',
    ].join('\n'),
  );
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
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null) throw new Error(`ordermatch exited (${child.exitCode}): ${stdout}${stderr}`);
    if (Date.now() > deadline) throw new Error(`ordermatch did not listen on ${port}: ${stdout}${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return gateway;
}
