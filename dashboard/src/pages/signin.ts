import { ApiError, signIn } from '../api.js';
import { field, h, mount } from '../dom.js';
import { t, type MessageKey } from '../i18n.js';
import { errorBox, notice } from '../ui.js';

/**
 * Sign-in with the client credentials. The secret goes once to `POST /v1/auth/token` and is then
 * dropped with the form; only the access token is kept, in memory.
 */
export function signInPage(view: HTMLElement, reason: MessageKey | null, lastClientId: string, done: () => void): void {
  const out = h('div', { 'aria-live': 'polite' });
  const button = h('button', { type: 'submit' }, t('signin.submit'));
  const form = h(
    'form',
    { class: 'stack', autocomplete: 'on' },
    h(
      'label',
      null,
      t('signin.clientId'),
      h('input', {
        name: 'client_id',
        required: true,
        autocomplete: 'username',
        value: lastClientId,
        placeholder: 'cli_…',
        spellcheck: 'false',
        autocapitalize: 'none',
      }),
    ),
    h(
      'label',
      null,
      t('signin.clientSecret'),
      h('input', { name: 'client_secret', type: 'password', required: true, autocomplete: 'current-password', placeholder: 'sk_test_…' }),
    ),
    button,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    button.disabled = true;
    out.replaceChildren();
    const secretInput = form.elements.namedItem('client_secret') as HTMLInputElement;
    signIn(field(form, 'client_id'), secretInput.value)
      .then(() => {
        secretInput.value = '';
        done();
      })
      .catch((error: unknown) => {
        secretInput.value = '';
        const wrong = error instanceof ApiError && error.status === 401;
        out.replaceChildren(wrong ? h('div', { class: 'alert error', role: 'alert' }, t('signin.wrong')) : errorBox(error));
        secretInput.focus();
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  mount(
    view,
    h(
      'section',
      { class: 'card signin' },
      h('h1', null, t('signin.title')),
      h('p', null, t('signin.intro')),
      reason === null ? null : notice(t(reason), 'info'),
      form,
      out,
    ),
  );
}
