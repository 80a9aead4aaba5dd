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
  created_at: number;
  updated_at: number;
}

export type PartnerRow = PartnerTable;
