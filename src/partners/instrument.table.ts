export type InstrumentStatus = 'active' | 'suspended';

export interface InstrumentTable {
  code: string;
  exchange: string;
  class: string;
  name: string;
  reference_price_cents: number;
  status: InstrumentStatus;
  created_at: number;
  updated_at: number;
}

export type InstrumentRow = InstrumentTable;
