import { call, query, type Attempt, type Delivery } from '../api.js';
import { field, h, mount } from '../dom.js';
import { when } from '../format.js';
import { badge, busy, go, heading, href, notice, pager, table, type Route } from '../ui.js';

const STATUSES = ['pending', 'succeeded', 'dead', 'cancelled'] as const;

function attempts(list: Attempt[]): HTMLElement {
  return table(
    ['#', 'At', 'Response', 'Duration', 'Error'],
    list.map((a, i) => [i + 1, when(a.attempted_at), a.status_code === null ? 'none' : String(a.status_code), `${a.duration_ms} ms`, a.error ?? '—']),
    'No attempt yet.',
  );
}

function deliveryCard(d: Delivery, onReplayed: () => Promise<void>): HTMLElement {
  let replay: HTMLElement | null = null;
  if (d.status === 'dead') {
    const out = h('div');
    const button = h('button', { type: 'button', class: 'secondary' }, 'Replay');
    button.addEventListener('click', () =>
      busy(button, out, async () => {
        await call('POST', `/v1/webhooks/deliveries/${encodeURIComponent(d.id)}/replay`, {});
        await onReplayed();
        return null;
      }),
    );
    replay = h('div', { class: 'actions' }, button, out);
  }
  return h(
    'article',
    { class: 'card delivery', 'data-delivery': d.id, 'data-status': d.status },
    h('header', { class: 'delivery-head' },
      h('span', { class: 'mono' }, d.id),
      badge(d.status),
    ),
    h('p', { class: 'small' },
      `${d.event_type} · event `, h('span', { class: 'mono' }, d.event_id),
      ' · endpoint ', h('a', { href: href(`endpoints/${d.endpoint_id}`), class: 'mono' }, d.endpoint_id),
      d.next_attempt_at === null ? null : ` · next attempt ${when(d.next_attempt_at)}`,
    ),
    h('details', { open: d.attempts.length <= 3 },
      h('summary', null, `${d.attempts.length} ${d.attempts.length === 1 ? 'attempt' : 'attempts'}`),
      attempts(d.attempts),
    ),
    replay,
  );
}

/** Deliveries with every attempt (`status=dead` is the dead-letter queue), filterable by endpoint. */
async function deliveriesView(view: HTMLElement, route: Route, dead: boolean): Promise<void> {
  const page = dead ? 'dead' : 'deliveries';
  const endpointId = route.params.get('endpoint_id') ?? '';
  const status = dead ? 'dead' : route.params.get('status') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const { body, headers } = await call<{ data: Delivery[] }>('GET', `/v1/webhooks/deliveries${query({ limit: 25, status, endpoint_id: endpointId, cursor })}`);
  const reload = () => deliveriesView(view, route, dead);

  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    dead ? null : h('label', null, 'Status', h('select', { name: 'status' }, h('option', { value: '' }, 'Any'), STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)))),
    h('label', { class: 'grow' }, 'Endpoint id', h('input', { name: 'endpoint_id', value: endpointId, placeholder: 'we_…', spellcheck: 'false', autocomplete: 'off' })),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go(page, { status: dead ? '' : field(form, 'status'), endpoint_id: field(form, 'endpoint_id') });
  });

  // Dead letters: one "replay all" per endpoint present on the page.
  let replayAll: HTMLElement | null = null;
  if (dead && body.data.length > 0) {
    const out = h('div');
    const endpoints = [...new Set(body.data.map((d) => d.endpoint_id))];
    replayAll = h('section', { class: 'card' },
      h('h2', null, 'Replay all'),
      h('div', { class: 'actions wrap' }, endpoints.map((id) => {
        const button = h('button', { type: 'button', class: 'secondary', 'data-endpoint': id }, `Replay all dead of ${id}`);
        button.addEventListener('click', () =>
          busy(button, out, async () => {
            const { body: result } = await call<{ replayed: number }>('POST', `/v1/webhooks/endpoints/${encodeURIComponent(id)}/replay-dead`, {});
            await reload();
            view.prepend(notice(`${result.replayed} dead ${result.replayed === 1 ? 'delivery' : 'deliveries'} of ${id} replayed.`));
            return null;
          }),
        );
        return button;
      })),
      out,
    );
  }

  mount(
    view,
    heading(dead ? 'Dead letters' : 'Deliveries'),
    dead ? h('p', null, 'Deliveries whose last scheduled attempt (+24 h) failed. A replay makes one new attempt, signed afresh, with the same event id.') : null,
    form,
    replayAll,
    body.data.length === 0
      ? h('p', { class: 'empty' }, dead ? 'No dead letters.' : 'No deliveries.')
      : h('div', { class: 'list' }, body.data.map((d) => deliveryCard(d, reload))),
    pager(headers, page, { status: dead ? undefined : status, endpoint_id: endpointId }),
  );
}

export const deliveriesPage = (view: HTMLElement, route: Route) => deliveriesView(view, route, false);
export const deadLettersPage = (view: HTMLElement, route: Route) => deliveriesView(view, route, true);
