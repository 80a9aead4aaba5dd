import { call, EVENT_TYPES, followEvents, query, type Delivery, type Endpoint, type EventEnvelope } from '../api.js';
import { field, h, mount, type Child } from '../dom.js';
import { day, when } from '../format.js';
import { t, tn } from '../i18n.js';
import { badge, busy, errorBox, facts, go, heading, href, notice, pager, table, type Route } from '../ui.js';

const PAGE_SIZE = 25;

/**
 * What an event is about, as a link to its page: the order (`data.id` of order events, `order_id`
 * of executions), the attestation, or the positions a statement's breaks concern. (A test event's
 * sample data names ids that do not exist.)
 */
function about(event: EventEnvelope): Child {
  const data = event.data;
  const id = [data['id'], data['order_id'], data['attestation_id']].find(
    (v): v is string => typeof v === 'string' && /^(ord|att)_/.test(v),
  );
  if (id !== undefined) return h('a', { href: href(`${id.startsWith('ord_') ? 'orders' : 'attestations'}/${id}`), class: 'mono' }, id);
  if (typeof data['date'] === 'string') return t('events.snapshotOf', { date: day(data['date']) });
  // A statement's breaks (position.break): the positions of its investor at its partner.
  if (typeof data['statement_id'] === 'string' && typeof data['subject_id'] === 'string' && typeof data['rcpt_to'] === 'string')
    return h(
      'a',
      { href: href('positions', { subject_id: data['subject_id'], rcpt_to: data['rcpt_to'] }), class: 'mono' },
      data['statement_id'],
    );
  return '—';
}

const mode = (event: EventEnvelope) => badge(event.livemode ? 'live' : 'test');

function rows(events: EventEnvelope[]): Child[][] {
  return events.map((e) => [h('a', { href: href(`events/${e.id}`), class: 'mono' }, e.id), e.type, when(e.created_at), about(e), mode(e)]);
}

const COLUMNS = (): string[] => [t('events.event'), t('events.type'), t('events.created'), t('events.about'), t('events.mode')];

/**
 * Follows the event stream, from the moment it is opened, until stopped, the session ends, or the
 * page is left (any change of the route stops it). New events are added on top, as they happen.
 */
function liveSection(type: string): HTMLElement {
  const body = h('tbody');
  const columns = COLUMNS();
  const status = h('p', { class: 'muted small', role: 'status', 'data-testid': 'live-status' }, t('events.notFollowing'));
  const start = h('button', { type: 'button', class: 'secondary' }, t('events.follow'));
  const stop = h('button', { type: 'button', class: 'secondary', disabled: true }, t('events.stop'));
  const out = h('div');
  // Shown from the first event on.
  const live = h(
    'table',
    { class: 'grid', 'data-testid': 'live-events', hidden: true },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    body,
  );
  let controller: AbortController | null = null;
  const end = () => controller?.abort();
  start.addEventListener('click', () => {
    controller = new AbortController();
    const { signal } = controller;
    window.addEventListener('hashchange', end, { once: true });
    start.disabled = true;
    stop.disabled = false;
    out.replaceChildren();
    status.textContent = t('events.following');
    followEvents(signal, (event) => {
      if (type !== '' && event.type !== type) return;
      const [first] = rows([event]);
      live.hidden = false;
      body.prepend(
        h(
          'tr',
          { 'data-event': event.id },
          (first ?? []).map((cell, i) => h('td', { 'data-label': columns[i] ?? '' }, cell)),
        ),
      );
    })
      .then((how) => {
        status.textContent = how === 'stopped' ? t('events.stopped') : t('events.ended');
      })
      .catch((error: unknown) => {
        status.textContent = t('events.stopped');
        out.replaceChildren(errorBox(error));
      })
      .finally(() => {
        window.removeEventListener('hashchange', end);
        start.disabled = false;
        stop.disabled = true;
      });
  });
  stop.addEventListener('click', end);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'live-title' },
    h('h2', { id: 'live-title' }, t('events.live')),
    h('div', { class: 'actions' }, start, stop),
    status,
    out,
    live,
  );
}

/** The account's events, newest first, filtered by type, paged by cursor; and the live stream. */
export async function eventsPage(view: HTMLElement, route: Route): Promise<void> {
  const type = route.params.get('type') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const { body, headers } = await call<{ data: EventEnvelope[] }>('GET', `/v1/events${query({ limit: PAGE_SIZE, type, cursor })}`);

  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h(
      'label',
      null,
      t('events.type'),
      h(
        'select',
        { name: 'type' },
        h('option', { value: '' }, t('filter.any')),
        EVENT_TYPES.map((t) => h('option', { value: t, selected: t === type }, t)),
      ),
    ),
    h('button', { type: 'submit' }, t('filter.submit')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go('events', { type: field(form, 'type') });
  });

  mount(
    view,
    heading(t('nav.events')),
    h('p', null, t('events.intro')),
    form,
    liveSection(type),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('events.stored')),
      table(COLUMNS(), rows(body.data), type === '' ? t('events.none') : t('events.noneOfType')),
      pager(headers, 'events', { type }),
    ),
  );
}

/** Where one event was delivered, with a way to send it again. */
async function deliveriesOf(eventId: string, list: HTMLElement): Promise<void> {
  const { body } = await call<{ data: Delivery[] }>('GET', `/v1/webhooks/deliveries${query({ event_id: eventId, limit: 50 })}`);
  mount(
    list,
    table(
      [t('events.delivery'), t('ep.endpoint'), t('deliveries.status'), t('events.attempts'), t('events.nextAttempt')],
      body.data.map((d) => [
        h('span', { class: 'mono' }, d.id),
        h('a', { href: href(`endpoints/${d.endpoint_id}`), class: 'mono' }, d.endpoint_id),
        badge(d.status, 'delivery'),
        d.attempts.length,
        when(d.next_attempt_at),
      ]),
      t('events.notDelivered'),
    ),
  );
}

/** One event: its envelope as delivered, what it is about, its deliveries, and sending it again. */
export async function eventPage(view: HTMLElement, route: Route): Promise<void> {
  const id = route.path[1] ?? '';
  const [{ body: event }, { body: endpoints }] = await Promise.all([
    call<EventEnvelope>('GET', `/v1/events/${encodeURIComponent(id)}`),
    call<{ data: Endpoint[] }>('GET', '/v1/webhooks/endpoints?limit=50'),
  ]);
  const list = h('div');
  await deliveriesOf(event.id, list);

  const out = h('div');
  const button = h('button', { type: 'submit' }, t('events.sendAgain'));
  const form = h(
    'form',
    { class: 'filters' },
    h(
      'label',
      { class: 'grow' },
      t('events.to'),
      h(
        'select',
        { name: 'endpoint_id' },
        h('option', { value: '' }, t('events.everyEndpoint')),
        endpoints.data.map((ep) => h('option', { value: ep.id }, `${ep.id} (${ep.url})`)),
      ),
    ),
    button,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const endpointId = field(form, 'endpoint_id');
    busy(button, out, async () => {
      const { body: sent } = await call<{ deliveries: Delivery[] }>(
        'POST',
        `/v1/events/${encodeURIComponent(event.id)}/resend`,
        endpointId === '' ? {} : { endpoint_id: endpointId },
      );
      await deliveriesOf(event.id, list);
      return notice(tn('events.due', sent.deliveries.length));
    });
  });

  mount(
    view,
    heading(t('events.heading', { id: event.id }), h('a', { href: href('events'), class: 'button secondary' }, t('events.all'))),
    h(
      'section',
      { class: 'card' },
      facts([
        [t('events.type'), h('span', { 'data-testid': 'event-type' }, event.type)],
        [t('events.created'), when(event.created_at)],
        [t('events.mode'), mode(event)],
        [t('events.about'), about(event)],
      ]),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('events.envelope')),
      h('pre', { class: 'json', 'data-testid': 'envelope' }, JSON.stringify(event, null, 2)),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('nav.deliveries')),
      list,
      h('p', { class: 'muted small' }, t('events.resendRule')),
      form,
      out,
    ),
  );
}
