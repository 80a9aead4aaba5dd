import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import pino from 'pino';
import { DATABASES, openTestStorage } from '../../../test/support/harness.js';
import { systemClock } from '../../lib/clock.js';
import { importPartners } from '../../partners/partner.service.js';
import { FixCredentialSealer } from './credentials.js';
import { FixEngine } from './fix-engine.js';
import { findSession } from './fix.repository.js';

/**
 * A gateway that answers nonsense: jspurefix fails on it, and the session ends and is tried again,
 * without the failure reaching the process (an uncaught exception would fail this test run).
 */
test('a gateway that answers garbage or hangs up ends the session, never the process; the runner tries again', async (t) => {
  const storage = await openTestStorage(t, DATABASES[0]!);
  const connections: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    connections.push(Date.now());
    socket.on('error', () => undefined);
    socket.once('data', () => {
      // First a reply that is no FIX at all, then a hang-up.
      if (connections.length % 2 === 1) socket.write('8=FIX.4.4\x019=zz\x0135=A\x01\x01\x01garbage\r\n\x00\xff');
      else socket.destroy();
    });
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
          name: 'Garbage Titres',
          jurisdiction: 'UEMOA',
          capabilities: ['equities'],
          connector: 'fix',
          fix: { host: '127.0.0.1', port, sender_comp_id: 'CAURI', target_comp_id: 'GARBAGE', tls: false },
        },
      ],
      {
        now: new Date(),
        fixPlaintextAllowed: true,
      },
    ),
  );
  const partnerId = report.applied[0]?.id ?? '';
  // Reconnection waits drawn at their shortest (0.8 s for the first two).
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
  // Loading jspurefix and its dictionary takes seconds of CPU on a busy machine before the first attempt.
  const deadline = Date.now() + 30_000;
  while (connections.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(connections.length >= 3, `connections: ${connections.length}`);
  const session = await findSession(storage.db, partnerId);
  assert.equal(session?.next_target_seq, 1, 'nothing from the gateway was taken for a message');
  assert.ok((session?.next_sender_seq ?? 0) >= 4, 'each attempt committed its Logon before sending it');
  assert.equal(engine.runner(partnerId)?.session, null);
});

test('TLS is on by default and the gateway certificate is verified: an untrusted one is refused before any FIX is sent', async (t) => {
  const storage = await openTestStorage(t, DATABASES[0]!);
  const dir = mkdtempSync(join(tmpdir(), 'cauri-fix-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'pipe' },
  );
  let handshakes = 0;
  let secured = 0;
  const server = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (socket) => {
    secured += 1;
    socket.destroy();
  });
  server.on('tlsClientError', () => (handshakes += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const report = await storage.transact((trx) =>
    importPartners(
      trx,
      [
        {
          name: 'Tls Titres',
          jurisdiction: 'UEMOA',
          capabilities: ['equities'],
          connector: 'fix',
          fix: { host: 'localhost', port, sender_comp_id: 'CAURI', target_comp_id: 'TLS' },
        },
      ],
      { now: new Date() },
    ),
  );
  const partnerId = report.applied[0]?.id ?? '';
  const engine = new FixEngine(
    storage.db,
    storage.transact,
    systemClock,
    new FixCredentialSealer(Buffer.alloc(32)),
    {
      runSessions: true,
      plaintextAllowed: false,
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
  const deadline = Date.now() + 10_000;
  let session = await findSession(storage.db, partnerId);
  while (((session?.last_error ?? null) === null || handshakes === 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    session = await findSession(storage.db, partnerId);
  }
  assert.match(session?.last_error ?? '', /self.signed|certificate/i);
  assert.equal(session?.state, 'disconnected');
  assert.ok(handshakes >= 1);
  assert.equal(secured, 0, 'no TLS session, so no FIX message, was ever established');
  assert.equal(session?.next_sender_seq, 1, 'nothing was committed for sending');
});

test('stopping while the gateway has not answered the Logon ends at once', async (t) => {
  const storage = await openTestStorage(t, DATABASES[0]!);
  let logons = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('data', () => (logons += 1));
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
          name: 'Silent Titres',
          jurisdiction: 'UEMOA',
          capabilities: ['equities'],
          connector: 'fix',
          fix: { host: '127.0.0.1', port, sender_comp_id: 'CAURI', target_comp_id: 'SILENT', tls: false },
        },
      ],
      { now: new Date(), fixPlaintextAllowed: true },
    ),
  );
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
      connectTimeoutMs: 60_000,
      answerTimeoutMs: 1000,
      random: () => 0,
    },
    pino({ level: 'silent' }),
  );
  engine.connector(report.applied[0]?.id ?? '');
  const deadline = Date.now() + 10_000;
  while (logons === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(logons, 1);
  const started = Date.now();
  await engine.close();
  assert.ok(Date.now() - started < 4000, `closed in ${Date.now() - started} ms`);
  const session = await findSession(storage.db, report.applied[0]?.id ?? '');
  assert.equal(session?.lease_owner, null, 'the lease is released');
});
