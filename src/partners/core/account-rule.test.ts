import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_CHECKS } from './checks.js';
import { accountForOrder, accountRuleOf } from './account-rule.js';

test('a partner requires an account when its checks say so, and whenever it is reached over FIX', () => {
  assert.deepEqual(accountRuleOf({ connector: 'sandbox', checks: NO_CHECKS, defaultAccount: null }), { required: false, fallback: null });
  assert.deepEqual(accountRuleOf({ connector: 'sandbox', checks: { accounts: true, holdings: false }, defaultAccount: null }), {
    required: true,
    fallback: null,
  });
  assert.deepEqual(accountRuleOf({ connector: 'fix', checks: NO_CHECKS, defaultAccount: null }), { required: true, fallback: null });
  assert.deepEqual(accountRuleOf({ connector: 'fix', checks: NO_CHECKS, defaultAccount: 'OMNIBUS' }), {
    required: true,
    fallback: 'OMNIBUS',
  });
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
