import { ApiError, call, query, type Position, type Statement } from '../api.js';
import { field, h, mount, type Child } from '../dom.js';
import { day, money, num, when } from '../format.js';
import { t, tn } from '../i18n.js';
import { busy, go, heading, notice, pager, table, type Route } from '../ui.js';

const PAGE_SIZE = 50;

/** A signed profit or loss, marked as a gain or a loss for the eye (the sign stays in the text). */
function pnl(cents: number | null, currency: string): Child {
  if (cents === null) return '—';
  return h('span', { class: cents > 0 ? 'gain' : cents < 0 ? 'loss' : null }, money(cents, currency));
}

/**
 * `KOLA.BRVM 100 1500000` per line: instrument, quantity and average cost in cents. Every line of the
 * SGI's statement; an error names the line.
 */
function holdingsOf(text: string): { instrument: string; qty: number; average_cost_cents: number }[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line, i) => {
      const [instrument, qty, cost, ...rest] = line.split(/\s+/);
      if (
        instrument === undefined ||
        qty === undefined ||
        cost === undefined ||
        rest.length > 0 ||
        !/^-?\d+$/.test(qty) ||
        !/^-?\d+$/.test(cost)
      ) {
        throw new ApiError(
          0,
          'invalid_line',
          `Line ${i + 1} should read: INSTRUMENT QUANTITY AVERAGE_COST_CENTS (got "${line}")`,
          null,
          [],
          { line: i + 1, text: line },
        );
      }
      return { instrument: instrument.toUpperCase(), qty: Number(qty), average_cost_cents: Number(cost) };
    });
}

/** A difference of quantity with its sign, grouped for the language: `+1 500`, `-25`. */
const signed = (qty: number): string => `${qty > 0 ? '+' : ''}${num(qty)}`;

function breaksTable(statement: Statement): HTMLElement {
  return table(
    [t('orders.instrument'), t('positions.statement'), t('positions.expected'), t('positions.difference')],
    statement.breaks.map((b) => [
      b.instrument,
      num(b.statement_qty),
      num(b.expected_qty),
      h('span', { class: b.difference_qty < 0 ? 'loss' : 'gain' }, signed(b.difference_qty)),
    ]),
    t('positions.noBreak'),
  );
}

/** Declaring a statement from the SGI's: the positions reload, with the answer and its breaks above the form. */
function declareForm(subject: string, declared: (result: HTMLElement) => Promise<void>): HTMLElement {
  const out = h('div');
  const button = h('button', { type: 'submit' }, t('positions.declare'));
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const form = h(
    'form',
    { class: 'stack' },
    h(
      'div',
      { class: 'fields' },
      h(
        'label',
        null,
        t('positions.investor'),
        h('input', { name: 'subject_id', value: subject, required: true, spellcheck: 'false', autocomplete: 'off' }),
      ),
      h(
        'label',
        null,
        t('positions.sgi'),
        h('input', { name: 'rcpt_to', required: true, placeholder: 'sgi_…', spellcheck: 'false', autocomplete: 'off' }),
      ),
      h('label', null, t('positions.asOf'), h('input', { name: 'as_of', type: 'date', value: yesterday, required: true })),
    ),
    h(
      'label',
      null,
      t('positions.holdings'),
      h('textarea', { name: 'holdings', rows: 4, placeholder: 'SNTS.BRVM 40 2500000', spellcheck: 'false' }),
    ),
    button,
    out,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(button, out, async () => {
      const body = {
        subject_id: field(form, 'subject_id'),
        rcpt_to: field(form, 'rcpt_to'),
        as_of: field(form, 'as_of'),
        holdings: holdingsOf(field(form, 'holdings')),
      };
      const { body: statement } = await call<Statement>('POST', '/v1/positions/statements', body);
      await declared(
        h(
          'section',
          { class: 'card', 'data-testid': 'statement-result' },
          notice(
            statement.breaks.length === 0
              ? t('positions.declaredNoBreak', { id: statement.id, date: day(statement.as_of) })
              : tn('positions.declaredBreaks', statement.breaks.length, { id: statement.id, date: day(statement.as_of) }),
          ),
          breaksTable(statement),
        ),
      );
      return null;
    });
  });
  return h(
    'section',
    { class: 'card' },
    h('h2', null, t('positions.declareTitle')),
    h('p', { class: 'muted small' }, t('positions.declareIntro')),
    form,
  );
}

/**
 * Positions per subject, partner and instrument (filtered, paged), the statements of the subject,
 * and a form to declare one.
 */
export async function positionsPage(view: HTMLElement, route: Route, result: HTMLElement | null = null): Promise<void> {
  const subject = route.params.get('subject_id') ?? '';
  const partner = route.params.get('rcpt_to') ?? '';
  const instrument = route.params.get('instrument') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const [{ body, headers }, { body: statements }] = await Promise.all([
    call<{ data: Position[] }>(
      'GET',
      `/v1/positions${query({ limit: PAGE_SIZE, subject_id: subject, rcpt_to: partner, instrument, cursor })}`,
    ),
    call<{ data: Statement[] }>('GET', `/v1/positions/statements${query({ limit: 10, subject_id: subject, rcpt_to: partner })}`),
  ]);

  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h('label', null, t('att.subject'), h('input', { name: 'subject_id', value: subject, placeholder: 'inv-0001', spellcheck: 'false' })),
    h('label', null, t('sessions.partner'), h('input', { name: 'rcpt_to', value: partner, placeholder: 'sgi_…', spellcheck: 'false' })),
    h(
      'label',
      null,
      t('orders.instrument'),
      h('input', { name: 'instrument', value: instrument, placeholder: 'KOLA.BRVM', autocapitalize: 'characters', spellcheck: 'false' }),
    ),
    h('button', { type: 'submit' }, t('filter.submit')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go('positions', {
      subject_id: field(form, 'subject_id'),
      rcpt_to: field(form, 'rcpt_to'),
      instrument: field(form, 'instrument').toUpperCase(),
    });
  });

  mount(
    view,
    heading(t('nav.positions')),
    form,
    h(
      'section',
      { class: 'card' },
      table(
        [
          t('positions.subjectPartner'),
          t('orders.instrument'),
          t('orders.qty'),
          t('positions.settled'),
          t('positions.avgCost'),
          t('positions.refPrice'),
          t('positions.marketValue'),
          t('positions.unrealised'),
          t('positions.realised'),
        ],
        body.data.map((p) => [
          [p.subject_id, h('div', { class: 'mono small muted' }, p.rcpt_to)],
          [
            p.instrument,
            p.statement_as_of === null ? null : h('div', { class: 'small muted' }, t('positions.since', { date: day(p.statement_as_of) })),
          ],
          h('span', { 'data-testid': `qty-${p.subject_id}-${p.instrument}` }, num(p.qty)),
          num(p.settled_qty),
          money(p.average_cost_cents, p.currency),
          money(p.reference_price_cents, p.currency),
          money(p.market_value_cents, p.currency),
          pnl(p.unrealised_pnl_cents, p.currency),
          pnl(p.realised_pnl_cents, p.currency),
        ]),
        subject !== '' || partner !== '' || instrument !== '' ? t('positions.noMatch') : t('positions.none'),
      ),
      h('p', { class: 'muted small' }, t('positions.rule')),
    ),
    pager(headers, 'positions', { subject_id: subject, rcpt_to: partner, instrument }),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('positions.statements')),
      table(
        [t('positions.statement'), t('att.subject'), t('positions.asOf'), t('positions.breaks'), t('positions.declared')],
        statements.data.map((s) => [
          h('span', { class: 'mono' }, s.id),
          s.subject_id,
          day(s.as_of),
          s.breaks.length === 0 ? t('orders.nothing') : s.breaks.map((b) => `${b.instrument} ${signed(b.difference_qty)}`).join(', '),
          when(s.created_at),
        ]),
        t('positions.noStatement'),
      ),
    ),
    result,
    declareForm(subject, (answer) => positionsPage(view, route, answer)),
  );
}
