import { call, query, type Attempt, type Delivery } from '../api.js';
import { field, h, mount } from '../dom.js';
import { when } from '../format.js';
import { t, tKnown, tn } from '../i18n.js';
import { badge, busy, go, heading, href, notice, pager, table, type Route } from '../ui.js';

const STATUSES = ['pending', 'succeeded', 'dead', 'cancelled'] as const;

function attempts(list: Attempt[]): HTMLElement {
  return table(
    ['#', t('deliveries.at'), t('deliveries.response'), t('deliveries.duration'), t('deliveries.error')],
    list.map((a, i) => [
      i + 1,
      when(a.attempted_at),
      a.status_code === null ? t('deliveries.noResponse') : String(a.status_code),
      t('deliveries.ms', { ms: a.duration_ms }),
      a.error === null || a.error === undefined ? '—' : h('span', { lang: 'en' }, a.error),
    ]),
    t('deliveries.noAttempt'),
  );
}

function deliveryCard(d: Delivery, onReplayed: () => Promise<void>): HTMLElement {
  let replay: HTMLElement | null = null;
  if (d.status === 'dead') {
    const out = h('div');
    const button = h('button', { type: 'button', class: 'secondary' }, t('deliveries.replay'));
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
    h('header', { class: 'delivery-head' }, h('span', { class: 'mono' }, d.id), badge(d.status, 'delivery')),
    h(
      'p',
      { class: 'small' },
      `${d.event_type} · ${t('deliveries.event')} `,
      h('span', { class: 'mono' }, d.event_id),
      ` · ${t('deliveries.endpoint')} `,
      h('a', { href: href(`endpoints/${d.endpoint_id}`), class: 'mono' }, d.endpoint_id),
      d.next_attempt_at === null ? null : ` · ${t('deliveries.nextAttempt', { at: when(d.next_attempt_at) })}`,
    ),
    h('details', { open: d.attempts.length <= 3 }, h('summary', null, tn('deliveries.attempts', d.attempts.length)), attempts(d.attempts)),
    replay,
  );
}

/** Deliveries with every attempt (`status=dead` is the dead-letter queue), filterable by endpoint. */
async function deliveriesView(view: HTMLElement, route: Route, dead: boolean): Promise<void> {
  const page = dead ? 'dead' : 'deliveries';
  const endpointId = route.params.get('endpoint_id') ?? '';
  const status = dead ? 'dead' : (route.params.get('status') ?? '');
  const cursor = route.params.get('cursor') ?? '';
  const { body, headers } = await call<{ data: Delivery[] }>(
    'GET',
    `/v1/webhooks/deliveries${query({ limit: 25, status, endpoint_id: endpointId, cursor })}`,
  );
  const reload = () => deliveriesView(view, route, dead);

  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    dead
      ? null
      : h(
          'label',
          null,
          t('deliveries.status'),
          h(
            'select',
            { name: 'status' },
            h('option', { value: '' }, t('filter.any')),
            STATUSES.map((s) =>
              h('option', { value: s, selected: s === status }, tKnown(`status.delivery.${s}`, tKnown(`status.${s}`, s))),
            ),
          ),
        ),
    h(
      'label',
      { class: 'grow' },
      t('deliveries.endpointId'),
      h('input', { name: 'endpoint_id', value: endpointId, placeholder: 'we_…', spellcheck: 'false', autocomplete: 'off' }),
    ),
    h('button', { type: 'submit' }, t('filter.submit')),
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
    replayAll = h(
      'section',
      { class: 'card' },
      h('h2', null, t('deliveries.replayAll')),
      h(
        'div',
        { class: 'actions wrap' },
        endpoints.map((id) => {
          const button = h('button', { type: 'button', class: 'secondary', 'data-endpoint': id }, t('deliveries.replayAllOf', { id }));
          button.addEventListener('click', () =>
            busy(button, out, async () => {
              const { body: result } = await call<{ replayed: number }>(
                'POST',
                `/v1/webhooks/endpoints/${encodeURIComponent(id)}/replay-dead`,
                {},
              );
              await reload();
              view.prepend(notice(tn('deliveries.replayedOf', result.replayed, { id })));
              return null;
            }),
          );
          return button;
        }),
      ),
      out,
    );
  }

  mount(
    view,
    heading(dead ? t('nav.dead') : t('nav.deliveries')),
    dead ? h('p', null, t('deliveries.deadIntro')) : null,
    form,
    replayAll,
    body.data.length === 0
      ? h('p', { class: 'empty' }, dead ? t('deliveries.noDead') : t('deliveries.none'))
      : h(
          'div',
          { class: 'list' },
          body.data.map((d) => deliveryCard(d, reload)),
        ),
    pager(headers, page, { status: dead ? undefined : status, endpoint_id: endpointId }),
  );
}

export const deliveriesPage = (view: HTMLElement, route: Route) => deliveriesView(view, route, false);
export const deadLettersPage = (view: HTMLElement, route: Route) => deliveriesView(view, route, true);
