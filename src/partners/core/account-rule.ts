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
 * A partner requires an account only when its import file says so (`checks.accounts: true`). Being
 * reached over FIX requires none: an order with neither a registered account nor the partner's
 * default (`fix.account`) is accepted and its NewOrderSingle carries no Account (1); the SGI may
 * refuse it, as it may refuse any order. A default satisfies the requirement for subjects with none
 * registered.
 */
export function accountRuleOf(partner: { checks: PartnerChecks; defaultAccount: string | null }): PartnerAccountRule {
  return { required: partner.checks.accounts, fallback: partner.defaultAccount };
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
