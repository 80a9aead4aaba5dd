/** The scopes of the specification's Authentication section: what an integrator's client may be granted, and its default. */
export const SCOPES = ['kyc:read', 'kyc:write', 'orders:read', 'orders:write', 'audit:read', 'webhooks:manage'] as const;

/**
 * Scopes of the deployment's operators (`operator:read`: the FIX partners' sessions). A client has
 * one only when the operator names it when creating the client (`cauri clients create --scopes`);
 * it is never part of the default.
 */
export const OPERATOR_SCOPES = ['operator:read'] as const;

export const ALL_SCOPES = [...SCOPES, ...OPERATOR_SCOPES] as const;
export type Scope = (typeof ALL_SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}

/** The specification's scopes and what each grants. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'kyc:read': 'Read KYC attestations',
  'kyc:write': 'Create or revoke KYC attestations',
  'orders:read': 'Read orders and fills',
  'orders:write': 'Submit, cancel and amend orders',
  'audit:read': 'Read audit snapshots and Merkle proofs',
  'webhooks:manage': 'Register and rotate webhook endpoints, read deliveries and events',
  'operator:read': "Read the deployment's operational state (the FIX sessions to the SGIs); never granted by default",
};
