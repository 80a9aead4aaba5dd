import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * What the QuickFIX programs of the tests and of the bench share: QuickFIX's C++ examples (Debian's
 * libquickfix-doc, QuickFIX C++ 1.15) run as independent FIX 4.4 acceptors, shipped built (the
 * executor) or built here with g++ (a changed executor, the ordermatch port). Nothing is installed
 * here: `.ci/run` installs the Debian packages, and a missing one fails with its name. QuickFIX
 * acceptors listen on every address, so they only ever run inside a network namespace that has
 * nothing but loopback (assertLoopbackOnly).
 */

export const QUICKFIX_EXAMPLES = '/usr/share/doc/libquickfix-doc/examples';
export const QUICKFIX_PACKAGES = 'libquickfix-dev libquickfix-doc g++ pkg-config patch';
export const FIX44_DICTIONARY = join(dirname(createRequire(import.meta.url).resolve('jspurefix/package.json')), 'data', 'FIX44.xml');
/** The executor example as Debian ships it, built. */
export const SHIPPED_EXECUTOR = `${QUICKFIX_EXAMPLES}/executor/C++/.libs/executor.gz`;

/** Writes the shipped executor's binary to `path`, executable. */
export function unpackShippedExecutor(path: string): void {
  writeFileSync(path, execFileSync('zcat', [SHIPPED_EXECUTOR], { maxBuffer: 64 * 1024 * 1024 }), { mode: 0o755 });
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
 * Writes the settings of an acceptor of the FIX 4.4 session SenderCompID `senderCompId` <-
 * TargetCompID `CAURI` on `port`, its file store in `dir`/store (which must exist); `extra` adds
 * lines to its [DEFAULT] section. Returns the file's path.
 */
export function writeAcceptorSettings(
  dir: string,
  file: string,
  options: { port: number; senderCompId: string; extra?: string[] },
): string {
  const path = join(dir, file);
  writeFileSync(
    path,
    [
      '[DEFAULT]',
      'ConnectionType=acceptor',
      `SocketAcceptPort=${options.port}`,
      `FileStorePath=${join(dir, 'store')}`,
      'StartTime=00:00:00',
      'EndTime=00:00:00',
      'UseDataDictionary=Y',
      `DataDictionary=${FIX44_DICTIONARY}`,
      ...(options.extra ?? []),
      '[SESSION]',
      'BeginString=FIX.4.4',
      `SenderCompID=${options.senderCompId}`,
      'TargetCompID=CAURI',
      '',
    ].join('\n'),
  );
  return path;
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
 * Resolves once 127.0.0.1:`port` takes a connection. `gone` says why waiting is pointless (the
 * program exited), else null; `detail` is added to the error of a program that never listened.
 */
export async function waitForListening(
  port: number,
  what: string,
  options: { ms?: number; gone?: () => string | null; detail?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.ms ?? 10_000);
  while (!(await listening(port))) {
    const gone = options.gone?.() ?? null;
    if (gone !== null) throw new Error(gone);
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port}${options.detail?.() ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface FixMessage {
  direction: 'incoming' | 'outgoing';
  /** The message with `|` for SOH. */
  text: string;
  fields: Map<number, string>;
}

/** A program's ScreenLog on standard output: `<time, session, incoming|outgoing>` then `  (message)`. */
export function parseScreenLog(output: string): FixMessage[] {
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

const run = promisify(execFile);

/** Runs a build tool; a missing one names the packages to install. */
export async function tool(command: string, args: string[], cwd?: string): Promise<string> {
  try {
    return (
      await run(command, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, ...(cwd === undefined ? {} : { cwd }) })
    ).stdout.trim();
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error(`${command} is missing: install the Debian packages ${QUICKFIX_PACKAGES} (see .ci/run)`);
    throw new Error(`${command} ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

/** The compiler and linker flags of the installed QuickFIX (pkg-config). */
export async function quickfixFlags(): Promise<{ cflags: string; libs: string }> {
  await tool('pkg-config', ['--exists', 'quickfix']).catch((error: Error) => {
    throw new Error(
      `QuickFIX's development files are missing (pkg-config quickfix): install the Debian packages ${QUICKFIX_PACKAGES} (see .ci/run)\n${error.message}`,
    );
  });
  const [cflags, libs] = await Promise.all([tool('pkg-config', ['--cflags', 'quickfix']), tool('pkg-config', ['--libs', 'quickfix'])]);
  return { cflags, libs };
}

/**
 * Compiles the C++ `units` of `dir` (`<unit>.cpp`, beside an empty config.h) side by side, then
 * links them against QuickFIX into `dir`/`output`.
 */
export async function compileProgram(dir: string, units: string[], output: string, flags: { cflags: string; libs: string }): Promise<void> {
  writeFileSync(join(dir, 'config.h'), '');
  const words = (text: string) => text.split(/\s+/).filter((f) => f !== '');
  // gnu++14: QuickFIX's headers use dynamic exception specifications, which C++17 removed.
  await Promise.all(
    units.map((unit) => tool('g++', ['-std=gnu++14', '-w', '-I.', ...words(flags.cflags), '-c', `${unit}.cpp`, '-o', `${unit}.o`], dir)),
  );
  await tool('g++', ['-o', output, ...units.map((unit) => `${unit}.o`), ...words(flags.libs), '-lpthread'], dir);
}
