import { call, EVENT_TYPES, query, type Delivery, type Endpoint, type EventEnvelope } from '../api.js';
import { checked, field, h, mount } from '../dom.js';
import { when } from '../format.js';
import { t, tn } from '../i18n.js';
import { badge, busy, facts, heading, href, notice, pager, secretBox, table, type Route } from '../ui.js';

function eventChoices(selected: readonly string[]): HTMLElement {
  return h(
    'fieldset',
    { class: 'choices' },
    h('legend', null, t('ep.events')),
    EVENT_TYPES.map((t) =>
      h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'events', value: t, checked: selected.includes(t) }), t),
    ),
  );
}

/** Webhook endpoints: the list, and registration (whose response holds the signing secret, shown once). */
export async function endpointsPage(view: HTMLElement, route: Route): Promise<void> {
  const cursor = route.params.get('cursor') ?? '';
  const { body, headers } = await call<{ data: Endpoint[] }>('GET', `/v1/webhooks/endpoints${query({ limit: 50, cursor })}`);

  const out = h('div');
  const button = h('button', { type: 'submit' }, t('ep.create'));
  const form = h(
    'form',
    { class: 'stack' },
    h(
      'label',
      null,
      t('ep.url'),
      h('input', {
        name: 'url',
        type: 'url',
        required: true,
        placeholder: 'https://example.com/hooks',
        spellcheck: 'false',
        autocomplete: 'off',
      }),
    ),
    eventChoices(EVENT_TYPES.filter((t) => t.startsWith('order.'))),
    h('label', null, t('ep.descriptionOptional'), h('input', { name: 'description', maxlength: 1024 })),
    button,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(button, out, async () => {
      const description = field(form, 'description');
      const { body: created } = await call<Endpoint & { secret: string }>('POST', '/v1/webhooks/endpoints', {
        url: field(form, 'url'),
        events: checked(form, 'events'),
        ...(description === '' ? {} : { description }),
      });
      form.reset();
      await listInto(list);
      return secretBox(
        t('ep.created', { id: created.id }),
        created.secret,
        h('p', null, h('a', { href: href(`endpoints/${created.id}`) }, t('ep.openIt'))),
      );
    });
  });

  const list = h('div');
  renderList(list, body.data);
  mount(
    view,
    heading(t('ep.title')),
    h('section', { class: 'card' }, h('h2', null, t('ep.new')), form),
    out,
    h('section', { class: 'card' }, h('h2', null, t('nav.endpoints')), list, pager(headers, 'endpoints', {})),
  );
}

async function listInto(list: HTMLElement): Promise<void> {
  const { body } = await call<{ data: Endpoint[] }>('GET', '/v1/webhooks/endpoints?limit=50');
  renderList(list, body.data);
}

function renderList(list: HTMLElement, endpoints: Endpoint[]): void {
  mount(
    list,
    table(
      [t('ep.endpoint'), t('ep.url'), t('ep.events'), t('ep.state'), t('ep.createdAt')],
      endpoints.map((ep) => [
        h('a', { href: href(`endpoints/${ep.id}`), class: 'mono' }, ep.id),
        h('span', { class: 'mono wrap' }, ep.url),
        ep.events.join(', '),
        badge(ep.disabled ? 'disabled' : 'enabled'),
        when(ep.created_at),
      ]),
      t('ep.none'),
    ),
  );
}

/** One endpoint: edit, disable, rotate its secret, send a test event, replay its dead letters. */
export async function endpointPage(view: HTMLElement, route: Route): Promise<void> {
  const id = route.path[1] ?? '';
  const path = `/v1/webhooks/endpoints/${encodeURIComponent(id)}`;
  const { body: ep } = await call<Endpoint>('GET', path);
  const reload = () => endpointPage(view, route);

  // Edit.
  const editOut = h('div');
  const save = h('button', { type: 'submit' }, t('ep.save'));
  const edit = h(
    'form',
    { class: 'stack' },
    h('label', null, t('ep.url'), h('input', { name: 'url', type: 'url', required: true, value: ep.url, spellcheck: 'false' })),
    eventChoices(ep.events),
    h('label', null, t('ep.description'), h('input', { name: 'description', value: ep.description ?? '', maxlength: 1024 })),
    save,
    editOut,
  );
  edit.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(save, editOut, async () => {
      const description = field(edit, 'description');
      await call('PATCH', path, {
        url: field(edit, 'url'),
        events: checked(edit, 'events'),
        description: description === '' ? null : description,
      });
      return notice(t('ep.saved'));
    });
  });

  // Disable / enable.
  const toggleOut = h('div');
  const toggle = h(
    'button',
    { type: 'button', class: ep.disabled ? '' : 'danger' },
    ep.disabled ? t('ep.enableButton') : t('ep.disableButton'),
  );
  toggle.addEventListener('click', () =>
    busy(toggle, toggleOut, async () => {
      await call('PATCH', path, { disabled: !ep.disabled });
      await reload();
      return null;
    }),
  );

  // Rotate the signing secret.
  const rotateOut = h('div');
  const rotate = h('button', { type: 'button', class: 'secondary' }, t('ep.rotate'));
  rotate.addEventListener('click', () =>
    busy(rotate, rotateOut, async () => {
      const { body } = await call<{ secret: string; previous_secret_expires_at: string }>('POST', `${path}/rotate-secret`, {});
      return secretBox(
        t('ep.newSecret'),
        body.secret,
        h('p', { class: 'small' }, t('ep.bothSecrets', { at: when(body.previous_secret_expires_at) })),
      );
    }),
  );

  // Test event.
  const testOut = h('div');
  const sendTest = h('button', { type: 'submit' }, t('ep.sendTest'));
  const test = h(
    'form',
    { class: 'filters' },
    h(
      'label',
      null,
      t('ep.type'),
      h(
        'select',
        { name: 'type' },
        EVENT_TYPES.map((t) => h('option', { value: t, selected: t === 'webhook.test' }, t)),
      ),
    ),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'livemode' }), 'livemode'),
    sendTest,
  );
  test.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(sendTest, testOut, async () => {
      const livemode = (test.elements.namedItem('livemode') as HTMLInputElement).checked;
      const { body } = await call<{ event: EventEnvelope; delivery: Delivery }>('POST', `${path}/test`, {
        type: field(test, 'type'),
        livemode,
      });
      return notice(
        h(
          'span',
          null,
          t('ep.testQueued', { id: body.event.id, type: body.event.type, livemode: String(body.event.livemode) }),
          ' ',
          h('a', { href: href('deliveries', { endpoint_id: ep.id }), class: 'mono' }, body.delivery.id),
          '.',
        ),
      );
    });
  });

  // Replay every dead delivery of this endpoint.
  const replayOut = h('div');
  const replay = h('button', { type: 'button', class: 'secondary' }, t('ep.replayDead'));
  replay.addEventListener('click', () =>
    busy(replay, replayOut, async () => {
      const { body } = await call<{ replayed: number }>('POST', `${path}/replay-dead`, {});
      return notice(tn('ep.replayed', body.replayed));
    }),
  );

  mount(
    view,
    heading(t('ep.heading', { id: ep.id }), h('a', { href: href('endpoints'), class: 'button secondary' }, t('ep.all'))),
    h(
      'section',
      { class: 'card' },
      facts([
        [t('ep.state'), badge(ep.disabled ? 'disabled' : 'enabled')],
        [t('ep.url'), h('span', { class: 'mono wrap' }, ep.url)],
        [t('ep.events'), ep.events.join(', ')],
        [t('ep.createdAt'), when(ep.created_at)],
        [t('ep.updatedAt'), when(ep.updated_at)],
      ]),
      h(
        'p',
        { class: 'links' },
        h('a', { href: href('deliveries', { endpoint_id: ep.id }) }, t('nav.deliveries')),
        ' · ',
        h('a', { href: href('dead', { endpoint_id: ep.id }) }, t('nav.dead')),
      ),
    ),
    h('section', { class: 'card' }, h('h2', null, t('ep.testTitle')), test, testOut),
    h('section', { class: 'card' }, h('h2', null, t('ep.edit')), edit),
    h('section', { class: 'card' }, h('h2', null, t('ep.secret')), h('p', null, t('ep.oldSecret')), rotate, rotateOut),
    h('section', { class: 'card' }, h('h2', null, t('nav.dead')), replay, replayOut),
    h(
      'section',
      { class: 'card' },
      h('h2', null, ep.disabled ? t('ep.enable') : t('ep.disable')),
      h('p', null, ep.disabled ? t('ep.disabledResume') : t('ep.disabledWait')),
      toggle,
      toggleOut,
    ),
  );
}
