import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import pino from 'pino';
import { DATABASES, openTestStorage } from '../../../test/support/harness.js';
import { systemClock } from '../../lib/clock.js';
import { importPartners } from '../../partners/partner.service.js';
import { FixCredentialSealer } from './credentials.js';
import { FixEngine } from './fix-engine.js';
import { findSession } from './fix.repository.js';
import { reconnectDelayMs } from './session-runner.js';

test('the reconnection delay: 1 s doubling to 30 s, within 20 % either way', () => {
  const lowest = () => 0;
  const highest = () => 0.999_999;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 20].map((n) => reconnectDelayMs(n, lowest)),
    [800, 1600, 3200, 6400, 12_800, 24_000, 24_000, 24_000],
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 20].map((n) => reconnectDelayMs(n, highest)),
    [1200, 2400, 4800, 9600, 19_200, 36_000, 36_000, 36_000],
  );
  assert.equal(reconnectDelayMs(0, lowest), 800, 'no failure yet counts as the first');
});

test('a gateway that drops every connection is tried again later and later', async (t) => {
  const storage = await openTestStorage(t, DATABASES[0]!);
  const attempts: number[] = [];
  const sockets = new Set<Socket>();
  // Takes the connection and hangs up at once: the Logon goes unanswered.
  const server = createServer((socket) => {
    attempts.push(performance.now());
    socket.on('error', () => undefined);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  const report = await storage.transact((trx) =>
    importPartners(
      trx,
      [
        {
          name: 'Dropping Titres',
          jurisdiction: 'UEMOA',
          capabilities: ['equities'],
          connector: 'fix',
          fix: { host: '127.0.0.1', port, sender_comp_id: 'CAURI', target_comp_id: 'DROP', tls: false },
        },
      ],
      { now: new Date(), fixPlaintextAllowed: true },
    ),
  );
  const partnerId = report.applied[0]?.id ?? '';
  // jspurefix's dictionary is parsed once per process, at the first connection: before the clock starts.
  await (await import('./jspurefix/library.js')).fix44Dictionary();
  // The shortest waits (random 0): 0.8 s, 1.6 s, 3.2 s.
  const engine = new FixEngine(
    storage.db,
    storage.transact,
    systemClock,
    new FixCredentialSealer(Buffer.alloc(32)),
    {
      runSessions: true,
      plaintextAllowed: true,
      owner: 'test',
      leaseMs: 30_000,
      connectTimeoutMs: 2000,
      answerTimeoutMs: 1000,
      random: () => 0,
    },
    pino({ level: 'silent' }),
  );
  t.after(() => engine.close());
  engine.connector(partnerId);
  const deadline = Date.now() + 40_000;
  while (attempts.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(attempts.length >= 4, `attempts: ${attempts.length}`);
  const gaps = attempts.slice(1, 4).map((at, i) => at - (attempts[i] as number));
  // Each wait is at least its delay (the attempt itself adds to it), and each is longer than the one before.
  for (const [i, least] of [800, 1600, 3200].entries())
    assert.ok((gaps[i] as number) >= least, `gap ${i + 1}: ${gaps[i]} ms, at least ${least}`);
  assert.ok(
    (gaps[1] as number) > (gaps[0] as number) && (gaps[2] as number) > (gaps[1] as number),
    `gaps grow: ${gaps.map(Math.round).join(', ')} ms`,
  );
  // The runner records each failure once the dropped connection is noticed, and clears it when the next
  // attempt starts: the failure of an attempt is read once it is recorded.
  let session = await findSession(storage.db, partnerId);
  for (const until = Date.now() + 10_000; session?.last_error == null && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    session = await findSession(storage.db, partnerId);
  }
  assert.equal(session?.state === 'logged_on', false);
  assert.notEqual(session?.last_error, null, 'the last failure is kept for the operator');
});
