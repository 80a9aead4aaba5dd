/** The scopes of the specification's Authentication section. */
export const SCOPES = ['kyc:read', 'kyc:write', 'orders:read', 'orders:write', 'audit:read', 'webhooks:manage'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
