import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WakeQueue } from './wake-queue.js';

test('items come out by time, ties in insertion order', () => {
  const queue = new WakeQueue<string>();
  const times = [50, 10, 30, 10, 70, 30, 0, 10];
  times.forEach((at, i) => queue.push(at, `${at}#${i}`));
  assert.equal(queue.size, times.length);
  assert.equal(queue.peekAt(), 0);
  const out: string[] = [];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) out.push(next.item);
  assert.deepEqual(out, ['0#6', '10#1', '10#3', '10#7', '30#2', '30#5', '50#0', '70#4']);
  assert.equal(queue.peekAt(), Number.POSITIVE_INFINITY);
});

test('a thousand random times come out sorted', () => {
  const queue = new WakeQueue<number>();
  let seed = 7;
  const times = Array.from({ length: 1000 }, () => (seed = (seed * 48271) % 2147483647) % 5000);
  for (const at of times) queue.push(at, at);
  const out: number[] = [];
  while (queue.size > 0) out.push(queue.pop()!.item);
  assert.deepEqual(
    out,
    [...times].sort((a, b) => a - b),
  );
});
