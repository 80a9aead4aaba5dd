import type { TestContext } from 'node:test';
import type { DatabaseCase } from '../support/harness.js';
import { KYC2_REQUEST } from '../support/api.js';
import { KYC3_REQUEST, orderContext, sandboxPartner, type OrderContext } from '../support/order-context.js';

// What the order tests share: the sandbox partners by name, attestations of each level, and a
// service on a manual clock that starts now, whose router runs when the test says.

export type { Json } from '../support/order-context.js';

export const BAOBAB = sandboxPartner('baobab'); // UEMOA: equities, bonds, opcvm
export const SAHEL = sandboxPartner('sahel'); // UEMOA: bonds, money_market
export const VOLTA = sandboxPartner('volta'); // GHANA
export const NIGER = sandboxPartner('fleuve'); // pending

export const KYC3 = KYC3_REQUEST;
export const KYC1 = {
  subject_id: 'lite-1',
  level: 'KYC1',
  jurisdictions: ['UEMOA'],
  verifications: KYC2_REQUEST.verifications.slice(0, 2),
};

export function setup(t: TestContext, database: DatabaseCase, env: Record<string, string> = {}): Promise<OrderContext> {
  return orderContext(t, database, new Date().toISOString(), env);
}
