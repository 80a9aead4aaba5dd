/**
 * What a partner requires of an order beyond the checks every order passes, as the operator declares
 * it in the partner's import file (`checks`). Each member is false unless declared true.
 *
 * - `accounts`: every order carries the investor's account number at the SGI (the one the client
 *   registered for the subject, else the partner's default account); see core/account-rule.ts.
 * - `holdings`: a sell may not exceed the subject's position available at the partner (held, plus
 *   bought, less pending sells); see positions/holdings-check.ts.
 */
export interface PartnerChecks {
  readonly accounts: boolean;
  readonly holdings: boolean;
}

export const NO_CHECKS: PartnerChecks = Object.freeze({ accounts: false, holdings: false });

/** The `checks` member of an import row, every member resolved. */
export function resolvePartnerChecks(member: { accounts?: boolean; holdings?: boolean }): PartnerChecks {
  return { accounts: member.accounts === true, holdings: member.holdings === true };
}

/** The stored form (JSON text, or null for a partner that requires nothing more) read back. */
export function parsePartnerChecks(stored: string | null): PartnerChecks {
  if (stored === null) return NO_CHECKS;
  const parsed = JSON.parse(stored) as Partial<PartnerChecks>;
  return { accounts: parsed.accounts === true, holdings: parsed.holdings === true };
}
