import { call, fetchDocument, query, ORDER_STATUSES, type EventEnvelope, type Fill, type Order } from '../api.js';
import { field, h, mount, type Child } from '../dom.js';
import { day, money, num, when } from '../format.js';
import { t, tKnown } from '../i18n.js';
import { badge, busy, facts, go, heading, href, pager, table, type Route } from '../ui.js';

const PAGE_SIZE = 20;

/** Orders, newest first, filtered by status and instrument, paged by cursor. */
export async function ordersPage(view: HTMLElement, route: Route): Promise<void> {
  const status = route.params.get('status') ?? '';
  const instrument = route.params.get('instrument') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const { body, headers } = await call<{ data: Order[] }>('GET', `/v1/orders${query({ limit: PAGE_SIZE, status, instrument, cursor })}`);

  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h(
      'label',
      null,
      t('orders.status'),
      h(
        'select',
        { name: 'status' },
        h('option', { value: '' }, t('filter.any')),
        ORDER_STATUSES.map((s) => h('option', { value: s, selected: s === status }, tKnown(`status.${s}`, s.replace(/_/g, ' ')))),
      ),
    ),
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
    go('orders', { status: field(form, 'status'), instrument: field(form, 'instrument').toUpperCase() });
  });

  mount(
    view,
    heading(t('nav.orders')),
    form,
    table(
      [
        t('orders.order'),
        t('orders.created'),
        t('orders.instrument'),
        t('orders.side'),
        t('orders.qty'),
        t('orders.filled'),
        t('orders.avgPrice'),
        t('orders.status'),
      ],
      body.data.map((o) => [
        h('a', { href: href(`orders/${o.id}`), class: 'mono' }, o.id),
        when(o.created_at),
        o.instrument,
        side(o.side),
        num(o.qty),
        num(o.filled_qty ?? 0),
        money(o.average_fill_price_cents, o.currency),
        badge(o.status),
      ]),
      status !== '' || instrument !== '' ? t('orders.noMatch') : t('orders.none'),
    ),
    pager(headers, 'orders', { status, instrument }),
  );
}

/** Whether an event is about this order: order events carry it as `data.id`, executions as `data.order_id`. */
function concerns(event: EventEnvelope, orderId: string): boolean {
  return event.data['order_id'] === orderId || (event.type.startsWith('order.') && event.data['id'] === orderId);
}

const words = (value: string) => tKnown(`reason.${value}`, value.replace(/_/g, ' '));
const side = (value: string) => tKnown(`side.${value}`, value);

/** The order's request waiting for the partner, with the values an amend asks for. */
function pendingOf(order: Order): Child {
  if (!order.pending_request) return t('orders.nothing');
  const changes = order.pending_changes;
  return [
    badge(order.pending_request),
    changes
      ? h(
          'span',
          { class: 'muted' },
          ` ${t('orders.pendingChanges', { qty: changes.qty, limit: money(changes.limit_price_cents, order.currency) })}`,
        )
      : null,
  ];
}

/** A fill's fees, one line per type, with their total. */
function feesOf(fill: Fill, currency: string | undefined): Child {
  if (fill.fees.length === 0) return h('span', { class: 'muted' }, t('orders.noFees'));
  const total = fill.fees.reduce((sum, f) => sum + f.amount_cents, 0);
  return h(
    'span',
    { class: 'fees', 'data-testid': 'fill-fees' },
    fill.fees.map((f) =>
      h('span', { class: 'small', 'data-fee': f.type }, `${tKnown(`fee.${f.type}`, f.type)} ${money(f.amount_cents, currency)}`, h('br')),
    ),
    h('strong', null, money(total, currency)),
  );
}

/**
 * The order's contract note as a PDF. It is fetched with the session's token (a plain link could not
 * carry it), then offered as links to open or save.
 */
function contractNote(order: Order): Child {
  const out = h('div');
  const button = h('button', { type: 'button', class: 'secondary', 'data-testid': 'contract-note' }, t('orders.contractNote'));
  button.addEventListener('click', () =>
    busy(button, out, async () => {
      const pdf = await fetchDocument(`/v1/orders/${encodeURIComponent(order.id)}/contract-note`, 'application/pdf');
      const url = URL.createObjectURL(pdf);
      const name = `contract-note-${order.id}.pdf`;
      return h(
        'p',
        { class: 'small' },
        h('a', { href: url, target: '_blank', rel: 'noopener', 'data-testid': 'contract-note-open' }, t('orders.openNote')),
        ` ${t('orders.or')} `,
        h('a', { href: url, download: name }, t('orders.saveNote', { name })),
        ` ${t('orders.kib', { size: Math.ceil(pdf.size / 1024) })}`,
      );
    }),
  );
  return h('div', { class: 'actions' }, button, out);
}

/** Cancel and amend, offered while the order can take them; each answers with the order as it then is. */
function actionsOf(order: Order, rerender: () => Promise<void>): Child {
  if (['filled', 'failed', 'cancelled'].includes(order.status)) return null;
  const out = h('div');
  const cancel = h('button', { type: 'button', class: 'danger' }, t('orders.cancel'));
  cancel.addEventListener('click', () =>
    busy(cancel, out, async () => {
      await call<Order>('POST', `/v1/orders/${encodeURIComponent(order.id)}/cancel`);
      await rerender();
      return null;
    }),
  );
  const amendable =
    order.limit_price_cents !== null &&
    order.limit_price_cents !== undefined &&
    (order.status === 'routed' || order.status === 'partially_filled') &&
    !order.pending_request;
  let amend: HTMLFormElement | null = null;
  if (amendable) {
    const button = h('button', { type: 'submit' }, t('orders.amend'));
    amend = h(
      'form',
      { class: 'filters' },
      h('label', null, t('orders.newQty'), h('input', { name: 'qty', type: 'number', min: 1, step: 1, placeholder: String(order.qty) })),
      h(
        'label',
        null,
        t('orders.newLimit'),
        h('input', { name: 'limit_price_cents', type: 'number', min: 1, step: 1, placeholder: String(order.limit_price_cents) }),
      ),
      button,
    );
    const form = amend;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const qty = field(form, 'qty');
      const limit = field(form, 'limit_price_cents');
      busy(button, out, async () => {
        await call<Order>('POST', `/v1/orders/${encodeURIComponent(order.id)}/amend`, {
          ...(qty === '' ? {} : { qty: Number(qty) }),
          ...(limit === '' ? {} : { limit_price_cents: Number(limit) }),
        });
        await rerender();
        return null;
      });
    });
  }
  return h('section', { class: 'card' }, h('h2', null, t('orders.change')), amend, h('div', { class: 'actions' }, cancel), out);
}

/**
 * One order: its state, its time in force and any request waiting for the partner, its fills (each
 * execution, and the cumulative `filled_qty` and quantity-weighted `average_fill_price_cents`), cancel
 * and amend while it is open, and its events among the account's most recent ones.
 */
export async function orderPage(view: HTMLElement, route: Route): Promise<void> {
  const id = route.path[1] ?? '';
  const [{ body: order }, { body: fills }, { body: events }] = await Promise.all([
    call<Order>('GET', `/v1/orders/${encodeURIComponent(id)}`),
    call<{ data: Fill[] }>('GET', `/v1/orders/${encodeURIComponent(id)}/fills`),
    call<{ data: EventEnvelope[] }>('GET', '/v1/events?limit=200'),
  ]);
  const mine = events.data.filter((e) => concerns(e, order.id));
  const filled = order.filled_qty ?? 0;
  const reason = order.failure_reason ?? order.cancel_reason;
  const refusal = order.last_refusal;
  mount(
    view,
    heading(t('orders.heading', { id: order.id }), h('a', { href: href('orders'), class: 'button secondary' }, t('orders.all'))),
    h(
      'section',
      { class: 'card' },
      facts([
        [
          t('orders.status'),
          [
            h('span', { 'data-testid': 'order-status' }, badge(order.status)),
            reason ? h('span', { class: 'muted', 'data-testid': 'order-reason' }, ` (${words(reason)})`) : null,
          ],
        ],
        [t('orders.instrument'), order.instrument],
        [t('orders.side'), side(order.side)],
        [t('orders.quantity'), h('span', { 'data-testid': 'order-qty' }, num(order.qty))],
        [
          t('orders.limitPrice'),
          order.limit_price_cents === null || order.limit_price_cents === undefined
            ? t('orders.market')
            : money(order.limit_price_cents, order.currency),
        ],
        [
          t('orders.tif'),
          h(
            'span',
            { 'data-testid': 'order-tif' },
            // A gtd order's date says it all: "good till 3 Dec 2026", not "good till date until ...".
            order.time_in_force === 'gtd' && order.expire_date
              ? t('orders.gtdUntil', { date: day(order.expire_date) })
              : tKnown(`tif.${order.time_in_force ?? 'day'}`, order.time_in_force ?? 'day'),
          ),
        ],
        [t('orders.expires'), when(order.expires_at)],
        [t('orders.waiting'), h('span', { 'data-testid': 'pending-request' }, pendingOf(order))],
        [
          t('orders.lastRefusal'),
          refusal
            ? t('orders.refused', {
                request: tKnown(`status.${refusal.request}`, refusal.request),
                reason: words(refusal.reason),
                at: when(refusal.refused_at),
              })
            : t('orders.noRefusal'),
        ],
        [t('orders.partner'), h('span', { class: 'mono' }, order.rcpt_to)],
        [
          t('orders.attestation'),
          order.kyc_attestation_id
            ? h('a', { href: href(`attestations/${order.kyc_attestation_id}`), class: 'mono' }, order.kyc_attestation_id)
            : '—',
        ],
        [t('orders.created'), when(order.created_at)],
        [t('orders.updated'), when(order.updated_at)],
      ]),
    ),
    actionsOf(order, () => orderPage(view, route)),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('orders.fills')),
      h(
        'div',
        { class: 'progress', role: 'img', 'aria-label': t('orders.filledOf', { filled, qty: order.qty }) },
        h('progress', { max: order.qty, value: filled }),
      ),
      facts([
        [t('orders.filledQty'), h('span', { 'data-testid': 'filled-qty' }, t('orders.of', { filled, qty: order.qty }))],
        [t('orders.averageFill'), h('span', { 'data-testid': 'average-price' }, money(order.average_fill_price_cents, order.currency))],
      ]),
      table(
        [
          t('orders.fill'),
          t('orders.executed'),
          t('orders.qty'),
          t('orders.price'),
          t('orders.gross'),
          t('orders.fees'),
          t('orders.net'),
          t('orders.settles'),
          t('orders.exchangeRef'),
        ],
        fills.data.map((f) => [
          h('span', { class: 'mono' }, f.id),
          when(f.executed_at),
          num(f.qty),
          money(f.price_cents, order.currency),
          money(f.gross_cents, order.currency),
          feesOf(f, order.currency),
          money(f.net_cents, order.currency),
          [day(f.settlement_date), ' ', badge(f.settlement_status)],
          h('span', { class: 'mono' }, f.exchange_ref),
        ]),
        t('orders.noFill'),
      ),
      fills.data.length > 0 ? contractNote(order) : null,
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('nav.events')),
      h('p', { class: 'muted small' }, t('orders.recentEvents')),
      table(
        [t('events.event'), t('events.type'), t('deliveries.at'), t('orders.fill')],
        mine.map((e) => [
          h('span', { class: 'mono' }, e.id),
          e.type,
          when(e.created_at),
          e.type === 'order.executed'
            ? `${num(e.data['fill_qty'] as number | undefined)} @ ${money(e.data['fill_price_cents'] as number | undefined, order.currency)}${e.data['exchange_ref'] ? ` (${String(e.data['exchange_ref'])})` : ''}`
            : '—',
        ]),
        t('orders.noEvent'),
      ),
    ),
  );
}
