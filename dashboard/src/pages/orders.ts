import { call, fetchDocument, query, ORDER_STATUSES, type EventEnvelope, type Fill, type Order } from '../api.js';
import { field, h, mount, type Child } from '../dom.js';
import { money, when } from '../format.js';
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
    h('label', null, 'Status', h('select', { name: 'status' }, h('option', { value: '' }, 'Any'), ORDER_STATUSES.map((s) => h('option', { value: s, selected: s === status }, s.replace(/_/g, ' '))))),
    h('label', null, 'Instrument', h('input', { name: 'instrument', value: instrument, placeholder: 'KOLA.BRVM', autocapitalize: 'characters', spellcheck: 'false' })),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go('orders', { status: field(form, 'status'), instrument: field(form, 'instrument').toUpperCase() });
  });

  mount(
    view,
    heading('Orders'),
    form,
    table(
      ['Order', 'Created', 'Instrument', 'Side', 'Qty', 'Filled', 'Avg. price', 'Status'],
      body.data.map((o) => [
        h('a', { href: href(`orders/${o.id}`), class: 'mono' }, o.id),
        when(o.created_at),
        o.instrument,
        o.side,
        o.qty,
        o.filled_qty ?? 0,
        money(o.average_fill_price_cents, o.currency),
        badge(o.status),
      ]),
      status !== '' || instrument !== '' ? 'No order matches these filters.' : 'No orders yet.',
    ),
    pager(headers, 'orders', { status, instrument }),
  );
}

/** Whether an event is about this order: order events carry it as `data.id`, executions as `data.order_id`. */
function concerns(event: EventEnvelope, orderId: string): boolean {
  return event.data['order_id'] === orderId || (event.type.startsWith('order.') && event.data['id'] === orderId);
}

const words = (value: string) => value.replace(/_/g, ' ');

/** The order's request waiting for the partner, with the values an amend asks for. */
function pendingOf(order: Order): Child {
  if (!order.pending_request) return 'none';
  const changes = order.pending_changes;
  return [
    badge(order.pending_request),
    changes ? h('span', { class: 'muted' }, ` (qty ${changes.qty}, limit ${money(changes.limit_price_cents, order.currency)})`) : null,
  ];
}

/** A fill's fees, one line per type, with their total. */
function feesOf(fill: Fill, currency: string | undefined): Child {
  if (fill.fees.length === 0) return h('span', { class: 'muted' }, 'none');
  const total = fill.fees.reduce((sum, f) => sum + f.amount_cents, 0);
  return h(
    'span',
    { class: 'fees', 'data-testid': 'fill-fees' },
    fill.fees.map((f) => h('span', { class: 'small' }, `${words(f.type)} ${money(f.amount_cents, currency)}`, h('br'))),
    h('strong', null, money(total, currency)),
  );
}

/**
 * The order's contract note as a PDF. It is fetched with the session's token (a plain link could not
 * carry it), then offered as links to open or save.
 */
function contractNote(order: Order): Child {
  const out = h('div');
  const button = h('button', { type: 'button', class: 'secondary', 'data-testid': 'contract-note' }, 'Contract note (PDF)');
  button.addEventListener('click', () =>
    busy(button, out, async () => {
      const pdf = await fetchDocument(`/v1/orders/${encodeURIComponent(order.id)}/contract-note`, 'application/pdf');
      const url = URL.createObjectURL(pdf);
      const name = `contract-note-${order.id}.pdf`;
      return h(
        'p',
        { class: 'small' },
        h('a', { href: url, target: '_blank', rel: 'noopener', 'data-testid': 'contract-note-open' }, 'Open the contract note'),
        ' or ',
        h('a', { href: url, download: name }, `save ${name}`),
        ` (${Math.ceil(pdf.size / 1024)} KiB).`,
      );
    }),
  );
  return h('div', { class: 'actions' }, button, out);
}

/** Cancel and amend, offered while the order can take them; each answers with the order as it then is. */
function actionsOf(order: Order, rerender: () => Promise<void>): Child {
  if (['filled', 'failed', 'cancelled'].includes(order.status)) return null;
  const out = h('div');
  const cancel = h('button', { type: 'button', class: 'danger' }, 'Cancel order');
  cancel.addEventListener('click', () =>
    busy(cancel, out, async () => {
      await call<Order>('POST', `/v1/orders/${encodeURIComponent(order.id)}/cancel`);
      await rerender();
      return null;
    }),
  );
  const amendable = order.limit_price_cents !== null && order.limit_price_cents !== undefined && (order.status === 'routed' || order.status === 'partially_filled') && !order.pending_request;
  let amend: HTMLFormElement | null = null;
  if (amendable) {
    const button = h('button', { type: 'submit' }, 'Amend');
    amend = h(
      'form',
      { class: 'filters' },
      h('label', null, 'New quantity', h('input', { name: 'qty', type: 'number', min: 1, step: 1, placeholder: String(order.qty) })),
      h('label', null, 'New limit (cents)', h('input', { name: 'limit_price_cents', type: 'number', min: 1, step: 1, placeholder: String(order.limit_price_cents) })),
      button,
    );
    const form = amend;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const qty = field(form, 'qty');
      const limit = field(form, 'limit_price_cents');
      busy(button, out, async () => {
        await call<Order>('POST', `/v1/orders/${encodeURIComponent(order.id)}/amend`, { ...(qty === '' ? {} : { qty: Number(qty) }), ...(limit === '' ? {} : { limit_price_cents: Number(limit) }) });
        await rerender();
        return null;
      });
    });
  }
  return h('section', { class: 'card' }, h('h2', null, 'Change the order'), amend, h('div', { class: 'actions' }, cancel), out);
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
    heading(`Order ${order.id}`, h('a', { href: href('orders'), class: 'button secondary' }, '← All orders')),
    h('section', { class: 'card' },
      facts([
        ['Status', [h('span', { 'data-testid': 'order-status' }, badge(order.status)), reason ? h('span', { class: 'muted', 'data-testid': 'order-reason' }, ` (${words(reason)})`) : null]],
        ['Instrument', order.instrument],
        ['Side', order.side],
        ['Quantity', h('span', { 'data-testid': 'order-qty' }, order.qty)],
        ['Limit price', order.limit_price_cents === null || order.limit_price_cents === undefined ? 'market order' : money(order.limit_price_cents, order.currency)],
        ['Time in force', `${order.time_in_force ?? 'day'}${order.expire_date ? ` until ${order.expire_date}` : ''}`],
        ['Expires', when(order.expires_at)],
        ['Waiting for the partner', h('span', { 'data-testid': 'pending-request' }, pendingOf(order))],
        ['Last refusal', refusal ? `${refusal.request} refused: ${words(refusal.reason)}, ${when(refusal.refused_at)}` : 'none'],
        ['Partner (rcpt_to)', h('span', { class: 'mono' }, order.rcpt_to)],
        ['Attestation', order.kyc_attestation_id ? h('a', { href: href(`attestations/${order.kyc_attestation_id}`), class: 'mono' }, order.kyc_attestation_id) : '—'],
        ['Created', when(order.created_at)],
        ['Updated', when(order.updated_at)],
      ]),
    ),
    actionsOf(order, () => orderPage(view, route)),
    h('section', { class: 'card' },
      h('h2', null, 'Fills'),
      h('div', { class: 'progress', role: 'img', 'aria-label': `${filled} of ${order.qty} filled` }, h('progress', { max: order.qty, value: filled })),
      facts([
        ['Filled quantity', h('span', { 'data-testid': 'filled-qty' }, `${filled} of ${order.qty}`)],
        ['Average fill price', h('span', { 'data-testid': 'average-price' }, money(order.average_fill_price_cents, order.currency))],
      ]),
      table(
        ['Fill', 'Executed', 'Qty', 'Price', 'Gross', 'Fees', 'Net', 'Settles', 'Exchange ref'],
        fills.data.map((f) => [
          h('span', { class: 'mono' }, f.id),
          when(f.executed_at),
          f.qty,
          money(f.price_cents, order.currency),
          money(f.gross_cents, order.currency),
          feesOf(f, order.currency),
          money(f.net_cents, order.currency),
          [f.settlement_date, ' ', badge(f.settlement_status)],
          h('span', { class: 'mono' }, f.exchange_ref),
        ]),
        'No execution yet.',
      ),
      fills.data.length > 0 ? contractNote(order) : null,
    ),
    h('section', { class: 'card' },
      h('h2', null, 'Events'),
      h('p', { class: 'muted small' }, 'From the 200 most recent events of your account.'),
      table(
        ['Event', 'Type', 'At', 'Fill'],
        mine.map((e) => [
          h('span', { class: 'mono' }, e.id),
          e.type,
          when(e.created_at),
          e.type === 'order.executed' ? `${String(e.data['fill_qty'] ?? '')} @ ${money(e.data['fill_price_cents'] as number | undefined, order.currency)}${e.data['exchange_ref'] ? ` (${String(e.data['exchange_ref'])})` : ''}` : '—',
        ]),
        'No recent event for this order.',
      ),
    ),
  );
}
