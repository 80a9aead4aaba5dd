/** `shipped`: from the repository's calendars/ folder; `import`: from `cauri calendars import`. */
export type CalendarOrigin = 'shipped' | 'import';

/** One exchange's calendar for one year. */
export interface MarketCalendarTable {
  exchange: string;
  year: number;
  source: string;
  /** JSON: timetable name to its phases. */
  timetables: string;
  /** JSON: weekday to timetable name or null. */
  week: string;
  /** JSON: the year's exceptional days, by date. */
  days: string;
  origin: CalendarOrigin;
  updated_at: number;
}

export type MarketCalendarRow = MarketCalendarTable;
