/** An investor's account number at an SGI, as one client registered it for one of its subjects. */
export interface InvestorAccountTable {
  client_id: string;
  /** The client's pseudonymous subject (the `subject_id` of its attestations). */
  subject_id: string;
  /** The SGI partner (`sgi_...`). */
  partner_id: string;
  /** Checked at registration (core/account-number.ts): it goes into Account (1) of FIX orders as it is. */
  account_number: string;
  created_at: number;
  updated_at: number;
}

export type InvestorAccountRow = InvestorAccountTable;
