import { call, currentSession } from '../api.js';
import { h, mount } from '../dom.js';
import { when } from '../format.js';
import { busy, facts, heading, secretBox } from '../ui.js';

/** The signed-in client: its token, and rotation of its own client secret (`POST /v1/auth/rotate-secret`). */
export async function accountPage(view: HTMLElement): Promise<void> {
  const session = currentSession();
  if (session === null) return;
  const out = h('div');
  const rotate = h('button', { type: 'button' }, 'Rotate client secret');
  const leaked = h('input', { type: 'checkbox', name: 'expire_previous' });
  rotate.addEventListener('click', () =>
    busy(rotate, out, async () => {
      const now = leaked.checked;
      const { body } = await call<{ client_id: string; client_secret: string; previous_secret_expires_at: string }>('POST', '/v1/auth/rotate-secret', now ? { expire_previous: 'now' } : {});
      const previous = now
        ? 'Your previous secret has stopped working. Tokens already issued with it keep working until they expire (15 minutes at most); ask your operator to disable and enable your client to end them at once.'
        : `Your previous secret keeps working until ${when(body.previous_secret_expires_at)}. Update every system that uses it before then.`;
      return secretBox('New client secret:', body.client_secret, h('p', { class: 'small' }, previous));
    }),
  );
  mount(
    view,
    heading('Account'),
    h('section', { class: 'card' },
      facts([
        ['Client id', h('span', { class: 'mono' }, session.clientId)],
        ['Scopes', session.scopes.join(', ')],
        ['Session ends', `${new Date(session.expiresAt).toLocaleTimeString()} (access tokens last 15 minutes)`],
      ]),
    ),
    h('section', { class: 'card' },
      h('h2', null, 'Client secret'),
      h('p', null, 'Rotation issues a new secret. The previous one keeps working for 24 hours, so your systems can switch without downtime.'),
      h('label', { class: 'check' }, leaked, 'The previous secret has leaked: stop it now (systems still using it fail at once)'),
      rotate,
      out,
    ),
  );
}
