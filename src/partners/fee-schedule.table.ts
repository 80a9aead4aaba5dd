/** `partner`: a partner's commission (owner its id); `exchange`: an exchange's fees and tax (owner its code). */
export type FeeScope = 'partner' | 'exchange';

/** `shipped`: from the repository's fees/ folder; `import`: from an import (partner file or `cauri fees import`). */
export type FeeOrigin = 'shipped' | 'import';

/** One version of a fee schedule, applying from `effective_from` until the next version's. */
export interface FeeScheduleTable {
  scope: FeeScope;
  owner: string;
  /** YYYY-MM-DD: the first trade date it applies to. */
  effective_from: string;
  source: string;
  /** JSON: the version as its file stated it (PartnerFeeVersion or ExchangeFeeVersion). */
  content: string;
  origin: FeeOrigin;
  updated_at: number;
}

export type FeeScheduleRow = FeeScheduleTable;
