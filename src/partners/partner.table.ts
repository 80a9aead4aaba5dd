export type PartnerStatus = 'approved' | 'pending' | 'suspended';

export interface PartnerTable {
  id: string;
  name: string;
  jurisdiction: string;
  /** JSON array of capabilities. */
  capabilities: string;
  approved_since: string | null;
  status: PartnerStatus;
  /** Name of the connector that carries this partner's orders (`sandbox` for simulated partners). */
  connector: string;
  /** The FIX session settings of a partner whose connector is `fix` (JSON of FixSettings), else null. */
  fix: string | null;
  /** Its FIX logon username and password, sealed with the master key (fix/credentials.ts), or null. */
  fix_credentials: string | null;
  /** What the partner requires of orders beyond the common checks (JSON of PartnerChecks), or null: nothing. */
  checks: string | null;
  /** Its TLS client certificate, private key and gateway certificate authorities, sealed (fix/credentials.ts), or null. */
  fix_tls: string | null;
  created_at: number;
  updated_at: number;
}

export type PartnerRow = PartnerTable;
