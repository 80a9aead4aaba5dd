import type { PartnerChecks } from './checks.js';

/**
 * Whether an order to a partner must carry the investor's account number at that SGI, and the
 * account the partner falls back on for a subject with none registered.
 */
export interface PartnerAccountRule {
  /** Orders to this partner need an account: registered for the subject, else `fallback`. */
  readonly required: boolean;
  /** The partner's default account (a FIX partner's `fix.account`), or null. */
  readonly fallback: string | null;
}

/**
 * A partner requires an account when its import file says so (`checks.accounts: true`), and when its
 * orders go over FIX: an SGI books a FIX order to the Account (1) it carries. A partner with a
 * default account (`fix.account`) satisfies the requirement with it for subjects with none registered.
 */
export function accountRuleOf(partner: { connector: string; checks: PartnerChecks; defaultAccount: string | null }): PartnerAccountRule {
  return { required: partner.checks.accounts || partner.connector === 'fix', fallback: partner.defaultAccount };
}

/**
 * The account an order is accepted with: the subject's registered one, else the partner's default;
 * `missing` when the partner requires one and there is neither. Fixed on the order when it is
 * accepted, so that a later change of the registration changes no order already placed.
 */
export function accountForOrder(rule: PartnerAccountRule, registered: string | undefined): { readonly account: string | null } | 'missing' {
  const account = registered ?? rule.fallback;
  if (account === null && rule.required) return 'missing';
  return { account };
}
