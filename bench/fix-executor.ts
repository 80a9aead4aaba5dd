import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  QUICKFIX_PACKAGES,
  SHIPPED_EXECUTOR,
  assertLoopbackOnly,
  unpackShippedExecutor,
  waitForListening,
  writeAcceptorSettings,
} from '../test/support/quickfix-program.js';

/**
 * QuickFIX's `executor` example (Debian's libquickfix-doc) as the SGI's gateway of the FIX scenario:
 * an acceptor that fills every limit order at once, at its limit. Its SenderCompID is `EXEC`, the
 * service's `CAURI`. QuickFIX acceptors listen on every address: this runs only in a network
 * namespace whose one interface is loopback. What it shares with the tests' QuickFIX programs is in
 * test/support/quickfix-program.ts.
 */

export interface RunningExecutor {
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts the executor on 127.0.0.1:`port` with its file store in a temporary folder. */
export async function startExecutor(port: number): Promise<RunningExecutor> {
  assertLoopbackOnly();
  if (!existsSync(SHIPPED_EXECUTOR)) throw new Error(`${SHIPPED_EXECUTOR} is missing: install the Debian packages ${QUICKFIX_PACKAGES}`);
  const dir = mkdtempSync(join(tmpdir(), 'cauri-bench-executor-'));
  mkdirSync(join(dir, 'store'));
  const binary = join(dir, 'executor');
  unpackShippedExecutor(binary);
  const settings = writeAcceptorSettings(dir, 'executor.cfg', { port, senderCompId: 'EXEC' });
  // Its screen log (every message) is read by nobody: sent to /dev/null so that it costs no pipe.
  const child: ChildProcess = spawn(binary, [settings], { cwd: dir, stdio: ['pipe', 'ignore', 'ignore'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForListening(port, 'the executor');
  return {
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
