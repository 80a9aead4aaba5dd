import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../lib/errors.js';
import { ManualClock } from '../lib/clock.js';
import { MemoryRateLimitStore } from '../http/rate-limit.js';
import { CredentialGuard, failureDelayMs } from './credential-guard.js';

test('failureDelayMs: nothing up to the allowance, then 100 ms doubling, at most 2 s', () => {
  const vectors: [number, number, number][] = [
    [1, 10, 0],
    [10, 10, 0],
    [11, 10, 100],
    [12, 10, 200],
    [13, 10, 400],
    [14, 10, 800],
    [15, 10, 1600],
    [16, 10, 2000],
    [17, 10, 2000],
    [1_000_000, 10, 2000],
  ];
  for (const [failures, allowed, expected] of vectors)
    assert.equal(failureDelayMs(failures, allowed), expected, `${failures} of ${allowed}`);
});

function replyRecorder() {
  const headers: Record<string, unknown> = {};
  const reply = { header: (name: string, value: unknown) => (headers[name] = value) } as unknown as FastifyReply;
  return { reply, headers };
}

test('CredentialGuard: failures count per address and per client id, apart; only the address is ever refused', async () => {
  const clock = new ManualClock('2026-11-22T10:00:20.000Z');
  const waits: number[] = [];
  const guard = new CredentialGuard(new MemoryRateLimitStore(), { failuresPerAddress: 3, failuresPerClient: 1 }, clock, async (ms) =>
    waits.push(ms),
  );
  const log = pino({ level: 'silent' });
  const { reply, headers } = replyRecorder();

  for (const address of ['a', 'a', 'b', 'c', 'd', 'e', 'f', 'g']) {
    await guard.admit(reply, address);
    await guard.failed(log, address, 'cli_victim');
  }
  assert.deepEqual(waits, [100, 200, 400, 800, 1600, 2000, 2000], 'the client id: slowed, bounded');
  await guard.admit(reply, 'a');
  await guard.failed(log, 'a', 'cli_other');
  const refused = await guard.admit(reply, 'a').catch((e: unknown) => e);
  assert.ok(refused instanceof ApiError && refused.code === 'rate_limit_exceeded' && refused.headers?.['retry-after'] === '40');
  assert.deepEqual(headers, {
    'x-ratelimit-limit': 3,
    'x-ratelimit-remaining': 0,
    'x-ratelimit-reset': Date.parse('2026-11-22T10:01:00Z') / 1000,
  });
  await guard.admit(reply, 'b');
  assert.deepEqual(guard.stats, { rejected: 2, delayed: 7, blocked: 1 });
  clock.advance(40_000);
  await guard.admit(reply, 'a');
});
