import { call } from '../api.js';
import { h, mount } from '../dom.js';
import { day as dayOf, when } from '../format.js';
import { t } from '../i18n.js';
import { badge, heading, table } from '../ui.js';

interface Exchange {
  code: string;
  name: string;
  jurisdiction: string;
  currency: string;
  settlement_days: number;
}

interface Clock {
  exchange: string;
  phase: string;
  is_open: boolean;
  next_open: string | null;
  next_close: string | null;
}

interface CalendarDay {
  date: string;
  open: boolean;
  phases: { name: string; start: string; end: string }[];
}

/** `09:00–15:00` from a day's first and last phase; `closed` on a closed day. */
function hours(day: CalendarDay | undefined): string {
  const first = day?.phases[0];
  const last = day?.phases.at(-1);
  return day?.open === true && first !== undefined && last !== undefined
    ? `${first.start.slice(11, 16)}–${last.end.slice(11, 16)}`
    : t('markets.closed');
}

/** Each exchange's clock now, and its hours over the next seven days (public routes, UTC). */
export async function marketsPage(view: HTMLElement): Promise<void> {
  const { body: exchanges } = await call<{ data: Exchange[] }>('GET', '/v1/exchanges');
  const codes = exchanges.data.map((e) => e.code);
  const [clocks, calendars] = await Promise.all([
    Promise.all(codes.map(async (code) => (await call<Clock>('GET', `/v1/exchanges/${code}/clock`)).body)),
    // The calendar starts today by default; the first seven of its days make the week.
    Promise.all(
      codes.map(async (code) => (await call<{ data: CalendarDay[] }>('GET', `/v1/exchanges/${code}/calendar`)).body.data.slice(0, 7)),
    ),
  ]);
  mount(
    view,
    heading(t('nav.markets')),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('markets.now')),
      table(
        [
          t('markets.exchange'),
          t('markets.jurisdiction'),
          t('markets.phase'),
          t('markets.nextOpen'),
          t('markets.nextClose'),
          t('markets.currency'),
          t('markets.settlement'),
        ],
        exchanges.data.map((e, i) => {
          const c = clocks[i];
          return [
            h(
              'span',
              { 'data-testid': `exchange-${e.code}` },
              h('strong', null, e.code),
              h('div', { class: 'small muted', translate: 'no' }, e.name),
            ),
            e.jurisdiction,
            c === undefined
              ? '—'
              : h('span', { 'data-testid': `phase-${e.code}` }, badge(c.phase), c.is_open ? ` ${t('markets.open')}` : ''),
            when(c?.next_open),
            when(c?.next_close),
            e.currency,
            `T+${e.settlement_days}`,
          ];
        }),
      ),
      h('p', { class: 'muted small' }, t('markets.rule')),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('markets.week')),
      table(
        [t('markets.date'), ...codes],
        (calendars[0] ?? []).map((day, d) => [dayOf(day.date), ...calendars.map((days) => hours(days[d]))]),
      ),
    ),
  );
}
