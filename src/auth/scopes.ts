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
