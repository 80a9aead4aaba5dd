import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_CHECKS } from './checks.js';
import { accountForOrder, accountRuleOf } from './account-rule.js';

test('a partner requires an account only when its checks say so, whatever its connector', () => {
  assert.deepEqual(accountRuleOf({ checks: NO_CHECKS, defaultAccount: null }), { required: false, fallback: null });
  assert.deepEqual(accountRuleOf({ checks: { accounts: true, holdings: false }, defaultAccount: null }), {
    required: true,
    fallback: null,
  });
  // A FIX partner: its default account stands in, and without one an order goes without Account (1).
  assert.deepEqual(accountRuleOf({ checks: NO_CHECKS, defaultAccount: 'OMNIBUS' }), { required: false, fallback: 'OMNIBUS' });
});

test("an order takes the registered account, else the partner's default; missing only when required and neither exists", () => {
  const required = { required: true, fallback: null };
  const withDefault = { required: true, fallback: 'OMNIBUS' };
  const optional = { required: false, fallback: null };
  assert.deepEqual(accountForOrder(required, 'INV-1'), { account: 'INV-1' });
  assert.equal(accountForOrder(required, undefined), 'missing');
  assert.deepEqual(accountForOrder(withDefault, 'INV-1'), { account: 'INV-1' });
  assert.deepEqual(accountForOrder(withDefault, undefined), { account: 'OMNIBUS' });
  assert.deepEqual(accountForOrder(optional, undefined), { account: null });
  assert.deepEqual(accountForOrder(optional, 'INV-1'), { account: 'INV-1' });
});
