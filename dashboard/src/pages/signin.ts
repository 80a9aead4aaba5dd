import { ApiError, signIn } from '../api.js';
import { field, h, mount } from '../dom.js';
import { errorBox, notice } from '../ui.js';

/**
 * Sign-in with the client credentials. The secret goes once to `POST /v1/auth/token` and is then
 * dropped with the form; only the access token is kept, in memory.
 */
export function signInPage(view: HTMLElement, reason: string | null, lastClientId: string, done: () => void): void {
  const out = h('div', { 'aria-live': 'polite' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'stack', autocomplete: 'on' },
    h('label', null, 'Client id', h('input', { name: 'client_id', required: true, autocomplete: 'username', value: lastClientId, placeholder: 'cli_…', spellcheck: 'false', autocapitalize: 'none' })),
    h('label', null, 'Client secret', h('input', { name: 'client_secret', type: 'password', required: true, autocomplete: 'current-password', placeholder: 'sk_test_…' })),
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
        out.replaceChildren(wrong ? h('div', { class: 'alert error', role: 'alert' }, 'Wrong client id or secret. Check both and try again.') : errorBox(error));
        secretInput.focus();
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  mount(
    view,
    h('section', { class: 'card signin' },
      h('h1', null, 'Sign in'),
      h('p', null, 'Use your API client credentials (client id and secret). The secret is exchanged for a 15-minute access token, kept only in this tab.'),
      reason === null ? null : notice(reason, 'info'),
      form,
      out,
    ),
  );
}
