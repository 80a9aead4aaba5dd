import { call, currentSession } from '../api.js';
import { h, mount } from '../dom.js';
import { localTime, when } from '../format.js';
import { t } from '../i18n.js';
import { busy, facts, heading, secretBox } from '../ui.js';

/** The signed-in client: its token, and rotation of its own client secret (`POST /v1/auth/rotate-secret`). */
export async function accountPage(view: HTMLElement): Promise<void> {
  const session = currentSession();
  if (session === null) return;
  const out = h('div');
  const rotate = h('button', { type: 'button' }, t('account.rotate'));
  const leaked = h('input', { type: 'checkbox', name: 'expire_previous' });
  rotate.addEventListener('click', () =>
    busy(rotate, out, async () => {
      const now = leaked.checked;
      const { body } = await call<{ client_id: string; client_secret: string; previous_secret_expires_at: string }>(
        'POST',
        '/v1/auth/rotate-secret',
        now ? { expire_previous: 'now' } : {},
      );
      const previous = now ? t('account.previousStopped') : t('account.previousUntil', { at: when(body.previous_secret_expires_at) });
      return secretBox(t('account.newSecret'), body.client_secret, h('p', { class: 'small' }, previous));
    }),
  );
  mount(
    view,
    heading(t('account.title')),
    h(
      'section',
      { class: 'card' },
      facts([
        [t('account.clientId'), h('span', { class: 'mono' }, session.clientId)],
        [t('account.scopes'), session.scopes.join(', ')],
        [t('account.sessionEnds'), t('account.sessionEndsAt', { at: localTime(session.expiresAt) })],
      ]),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('account.secret')),
      h('p', null, t('account.rotation')),
      h('label', { class: 'check' }, leaked, t('account.leaked')),
      rotate,
      out,
    ),
  );
}
