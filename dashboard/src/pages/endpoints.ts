import { call, EVENT_TYPES, query, type Delivery, type Endpoint, type EventEnvelope } from '../api.js';
import { checked, field, h, mount } from '../dom.js';
import { when } from '../format.js';
import { badge, busy, facts, heading, href, notice, pager, secretBox, table, type Route } from '../ui.js';

function eventChoices(selected: readonly string[]): HTMLElement {
  return h(
    'fieldset',
    { class: 'choices' },
    h('legend', null, 'Events'),
    EVENT_TYPES.map((t) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'events', value: t, checked: selected.includes(t) }), t)),
  );
}

/** Webhook endpoints: the list, and registration (whose response holds the signing secret, shown once). */
export async function endpointsPage(view: HTMLElement, route: Route): Promise<void> {
  const cursor = route.params.get('cursor') ?? '';
  const { body, headers } = await call<{ data: Endpoint[] }>('GET', `/v1/webhooks/endpoints${query({ limit: 50, cursor })}`);

  const out = h('div');
  const button = h('button', { type: 'submit' }, 'Create endpoint');
  const form = h(
    'form',
    { class: 'stack' },
    h('label', null, 'URL', h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://example.com/hooks', spellcheck: 'false', autocomplete: 'off' })),
    eventChoices(EVENT_TYPES.filter((t) => t.startsWith('order.'))),
    h('label', null, 'Description (optional)', h('input', { name: 'description', maxlength: 1024 })),
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
      return secretBox(`Endpoint ${created.id} created. Its signing secret:`, created.secret, h('p', null, h('a', { href: href(`endpoints/${created.id}`) }, 'Open the endpoint →')));
    });
  });

  const list = h('div');
  renderList(list, body.data);
  mount(
    view,
    heading('Webhook endpoints'),
    h('section', { class: 'card' }, h('h2', null, 'New endpoint'), form),
    out,
    h('section', { class: 'card' }, h('h2', null, 'Endpoints'), list, pager(headers, 'endpoints', {})),
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
      ['Endpoint', 'URL', 'Events', 'State', 'Created'],
      endpoints.map((ep) => [
        h('a', { href: href(`endpoints/${ep.id}`), class: 'mono' }, ep.id),
        h('span', { class: 'mono wrap' }, ep.url),
        ep.events.join(', '),
        badge(ep.disabled ? 'disabled' : 'enabled'),
        when(ep.created_at),
      ]),
      'No endpoint yet.',
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
  const save = h('button', { type: 'submit' }, 'Save changes');
  const edit = h(
    'form',
    { class: 'stack' },
    h('label', null, 'URL', h('input', { name: 'url', type: 'url', required: true, value: ep.url, spellcheck: 'false' })),
    eventChoices(ep.events),
    h('label', null, 'Description', h('input', { name: 'description', value: ep.description ?? '', maxlength: 1024 })),
    save,
    editOut,
  );
  edit.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(save, editOut, async () => {
      const description = field(edit, 'description');
      await call('PATCH', path, { url: field(edit, 'url'), events: checked(edit, 'events'), description: description === '' ? null : description });
      return notice('Saved.');
    });
  });

  // Disable / enable.
  const toggleOut = h('div');
  const toggle = h('button', { type: 'button', class: ep.disabled ? '' : 'danger' }, ep.disabled ? 'Enable endpoint' : 'Disable endpoint');
  toggle.addEventListener('click', () =>
    busy(toggle, toggleOut, async () => {
      await call('PATCH', path, { disabled: !ep.disabled });
      await reload();
      return null;
    }),
  );

  // Rotate the signing secret.
  const rotateOut = h('div');
  const rotate = h('button', { type: 'button', class: 'secondary' }, 'Rotate signing secret');
  rotate.addEventListener('click', () =>
    busy(rotate, rotateOut, async () => {
      const { body } = await call<{ secret: string; previous_secret_expires_at: string }>('POST', `${path}/rotate-secret`, {});
      return secretBox('New signing secret:', body.secret, h('p', { class: 'small' }, `Deliveries are signed with both secrets until ${when(body.previous_secret_expires_at)}; switch your receiver to the new one before then.`));
    }),
  );

  // Test event.
  const testOut = h('div');
  const sendTest = h('button', { type: 'submit' }, 'Send test event');
  const test = h(
    'form',
    { class: 'filters' },
    h('label', null, 'Type', h('select', { name: 'type' }, EVENT_TYPES.map((t) => h('option', { value: t, selected: t === 'webhook.test' }, t)))),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'livemode' }), 'livemode'),
    sendTest,
  );
  test.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(sendTest, testOut, async () => {
      const livemode = (test.elements.namedItem('livemode') as HTMLInputElement).checked;
      const { body } = await call<{ event: EventEnvelope; delivery: Delivery }>('POST', `${path}/test`, { type: field(test, 'type'), livemode });
      return notice(
        h('span', null, `Test event ${body.event.id} (${body.event.type}, livemode ${String(body.event.livemode)}) queued as delivery `, h('a', { href: href('deliveries', { endpoint_id: ep.id }), class: 'mono' }, body.delivery.id), '.'),
      );
    });
  });

  // Replay every dead delivery of this endpoint.
  const replayOut = h('div');
  const replay = h('button', { type: 'button', class: 'secondary' }, 'Replay all dead deliveries');
  replay.addEventListener('click', () =>
    busy(replay, replayOut, async () => {
      const { body } = await call<{ replayed: number }>('POST', `${path}/replay-dead`, {});
      return notice(`${body.replayed} dead ${body.replayed === 1 ? 'delivery' : 'deliveries'} replayed.`);
    }),
  );

  mount(
    view,
    heading(`Endpoint ${ep.id}`, h('a', { href: href('endpoints'), class: 'button secondary' }, '← All endpoints')),
    h('section', { class: 'card' },
      facts([
        ['State', badge(ep.disabled ? 'disabled' : 'enabled')],
        ['URL', h('span', { class: 'mono wrap' }, ep.url)],
        ['Events', ep.events.join(', ')],
        ['Created', when(ep.created_at)],
        ['Updated', when(ep.updated_at)],
      ]),
      h('p', { class: 'links' },
        h('a', { href: href('deliveries', { endpoint_id: ep.id }) }, 'Deliveries'),
        ' · ',
        h('a', { href: href('dead', { endpoint_id: ep.id }) }, 'Dead letters'),
      ),
    ),
    h('section', { class: 'card' }, h('h2', null, 'Send a test event'), test, testOut),
    h('section', { class: 'card' }, h('h2', null, 'Edit'), edit),
    h('section', { class: 'card' }, h('h2', null, 'Signing secret'), h('p', null, 'The old secret keeps signing deliveries (as a second v1= value) for 24 hours.'), rotate, rotateOut),
    h('section', { class: 'card' }, h('h2', null, 'Dead letters'), replay, replayOut),
    h('section', { class: 'card' },
      h('h2', null, ep.disabled ? 'Enable' : 'Disable'),
      h('p', null, ep.disabled ? 'A disabled endpoint gets no new deliveries; its pending ones resume when enabled.' : 'A disabled endpoint gets no new deliveries; its pending ones wait until it is enabled again.'),
      toggle,
      toggleOut,
    ),
  );
}
