export interface TestClockTable {
  /** `clk_...` */
  id: string;
  client_id: string;
  name: string | null;
  /** The clock's time, epoch ms: what its orders see as now. */
  frozen_time: number;
  created_at: number;
  /** Set when the client deleted the clock; its orders keep its last time. */
  deleted_at: number | null;
}

export type TestClockRow = TestClockTable;
