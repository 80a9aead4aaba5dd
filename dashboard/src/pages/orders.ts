import { call, query, ORDER_STATUSES, type EventEnvelope, type Order } from '../api.js';
import { field, h, mount } from '../dom.js';
import { money, when } from '../format.js';
import { badge, facts, go, heading, href, pager, table, type Route } from '../ui.js';

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

/**
 * One order: its state, its fills (the API reports the cumulative `filled_qty` and the quantity-weighted
 * `average_fill_price_cents`), and its events among the account's most recent ones.
 */
export async function orderPage(view: HTMLElement, route: Route): Promise<void> {
  const id = route.path[1] ?? '';
  const [{ body: order }, { body: events }] = await Promise.all([
    call<Order>('GET', `/v1/orders/${encodeURIComponent(id)}`),
    call<{ data: EventEnvelope[] }>('GET', '/v1/events?limit=200'),
  ]);
  const mine = events.data.filter((e) => concerns(e, order.id));
  const filled = order.filled_qty ?? 0;
  mount(
    view,
    heading(`Order ${order.id}`, h('a', { href: href('orders'), class: 'button secondary' }, '← All orders')),
    h('section', { class: 'card' },
      facts([
        ['Status', [badge(order.status), order.failure_reason ? h('span', { class: 'muted' }, ` (${order.failure_reason.replace(/_/g, ' ')})`) : null]],
        ['Instrument', order.instrument],
        ['Side', order.side],
        ['Quantity', order.qty],
        ['Limit price', order.limit_price_cents === null || order.limit_price_cents === undefined ? 'market order' : money(order.limit_price_cents, order.currency)],
        ['Partner (rcpt_to)', h('span', { class: 'mono' }, order.rcpt_to)],
        ['Attestation', order.kyc_attestation_id ? h('a', { href: href(`attestations/${order.kyc_attestation_id}`), class: 'mono' }, order.kyc_attestation_id) : '—'],
        ['Created', when(order.created_at)],
        ['Updated', when(order.updated_at)],
      ]),
    ),
    h('section', { class: 'card' },
      h('h2', null, 'Fills'),
      h('div', { class: 'progress', role: 'img', 'aria-label': `${filled} of ${order.qty} filled` }, h('progress', { max: order.qty, value: filled })),
      facts([
        ['Filled quantity', h('span', { 'data-testid': 'filled-qty' }, `${filled} of ${order.qty}`)],
        ['Average fill price', h('span', { 'data-testid': 'average-price' }, money(order.average_fill_price_cents, order.currency))],
      ]),
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
          e.type === 'order.executed' ? `${String(e.data['fill_qty'] ?? '')} @ ${money(e.data['fill_price_cents'] as number | undefined)}${e.data['exchange_ref'] ? ` (${String(e.data['exchange_ref'])})` : ''}` : '—',
        ]),
        'No recent event for this order.',
      ),
    ),
  );
}
