import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FINAL_STATUSES,
  IllegalTransitionError,
  ORDER_STATUSES,
  ORDER_TRANSITIONS,
  assertTransition,
  canTransition,
  isFinal,
  isOrderStatus,
  type OrderStatus,
} from './state-machine.js';

// The expected table is written out again, independently of ORDER_TRANSITIONS, from docs/concepts.md.
const ALLOWED = new Set([
  'created>routed',
  'created>failed',
  'created>cancelled',
  'routed>partially_filled',
  'routed>filled',
  'routed>failed',
  'routed>cancelled',
  'partially_filled>partially_filled',
  'partially_filled>filled',
  'partially_filled>cancelled',
]);

test('every one of the 36 status pairs matches the documented table', () => {
  assert.equal(ORDER_STATUSES.length, 6);
  let checked = 0;
  let allowed = 0;
  for (const from of ORDER_STATUSES) {
    for (const to of ORDER_STATUSES) {
      const expected = ALLOWED.has(`${from}>${to}`);
      assert.equal(canTransition(from, to), expected, `${from} -> ${to}`);
      if (expected) {
        allowed++;
        assert.doesNotThrow(() => assertTransition(from, to));
      } else {
        assert.throws(
          () => assertTransition(from, to),
          (err: unknown) =>
            err instanceof IllegalTransitionError && err.code === 'illegal_transition' && err.from === from && err.to === to,
          `${from} -> ${to} must throw`,
        );
      }
      checked++;
    }
  }
  assert.equal(checked, 36);
  assert.equal(allowed, ALLOWED.size);
});

test('filled, failed and cancelled are final, and only they', () => {
  const finals: OrderStatus[] = ['filled', 'failed', 'cancelled'];
  for (const s of ORDER_STATUSES) assert.equal(isFinal(s), finals.includes(s), s);
  assert.deepEqual([...FINAL_STATUSES].sort(), [...finals].sort());
});

test('the table is frozen data', () => {
  assert.ok(Object.isFrozen(ORDER_TRANSITIONS));
  assert.ok(Object.isFrozen(ORDER_TRANSITIONS.created));
  assert.throws(() => (ORDER_TRANSITIONS.created as OrderStatus[]).push('filled'));
});

test('isOrderStatus recognises exactly the six statuses', () => {
  for (const s of ORDER_STATUSES) assert.ok(isOrderStatus(s));
  for (const v of ['', 'Routed', 'open', 'partially-filled', null, 3]) assert.equal(isOrderStatus(v), false, String(v));
});
