import { call, REVOCATION_REASONS, type Attestation, type AttestationStatus } from '../api.js';
import { field, h, mount } from '../dom.js';
import { when } from '../format.js';
import { t, tKnown } from '../i18n.js';
import { badge, busy, facts, go, heading, href, notice, table, type Route } from '../ui.js';

function lookupForm(current = ''): HTMLFormElement {
  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h(
      'label',
      { class: 'grow' },
      t('att.id'),
      h('input', { name: 'id', value: current, placeholder: 'att_…', required: true, spellcheck: 'false', autocomplete: 'off' }),
    ),
    h('button', { type: 'submit' }, t('att.open')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go(`attestations/${encodeURIComponent(field(form, 'id'))}`);
  });
  return form;
}

/** The API has no attestation listing (they are read by id), so the page starts with a look-up. */
export async function attestationsPage(view: HTMLElement): Promise<void> {
  mount(view, heading(t('att.title')), h('p', null, t('att.intro')), lookupForm());
}

/** One attestation (exactly the signed object), its status, and revocation with a reason. */
export async function attestationPage(view: HTMLElement, route: Route): Promise<void> {
  const id = route.path[1] ?? '';
  const [{ body: att }, { body: status }] = await Promise.all([
    call<Attestation>('GET', `/v1/kyc/attestations/${encodeURIComponent(id)}`),
    call<AttestationStatus>('GET', `/v1/kyc/attestations/${encodeURIComponent(id)}/status`),
  ]);

  let revoke: HTMLElement | null = null;
  if (status.status === 'active') {
    const out = h('div');
    const button = h('button', { type: 'submit', class: 'danger' }, t('att.revokeButton'));
    const form = h(
      'form',
      { class: 'stack' },
      h('p', null, t('att.revokeFinal')),
      h(
        'label',
        null,
        t('att.reason'),
        h(
          'select',
          { name: 'reason' },
          REVOCATION_REASONS.map((r) => h('option', { value: r }, tKnown(`reason.${r}`, r.replace(/_/g, ' ')))),
        ),
      ),
      button,
      out,
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      busy(button, out, async () => {
        await call('POST', `/v1/kyc/attestations/${encodeURIComponent(att.id)}/revoke`, { reason: field(form, 'reason') });
        await attestationPage(view, route);
        return null;
      });
    });
    revoke = h('section', { class: 'card' }, h('h2', null, t('att.revoke')), form);
  }

  mount(
    view,
    heading(t('att.heading', { id: att.id }), h('a', { href: href('attestations'), class: 'button secondary' }, t('att.another'))),
    status.status === 'revoked'
      ? notice(
          t('att.revokedOn', {
            at: when(status.revoked_at),
            reason:
              status.reason === null || status.reason === undefined
                ? t('att.noReason')
                : tKnown(`reason.${status.reason}`, status.reason.replace(/_/g, ' ')),
          }),
          'info',
        )
      : null,
    h(
      'section',
      { class: 'card' },
      facts([
        [t('att.status'), h('span', { 'data-testid': 'attestation-status' }, badge(status.status))],
        [t('att.subject'), h('span', { class: 'mono' }, att.subject_id)],
        [t('att.level'), att.level],
        [t('att.jurisdictions'), att.jurisdictions.join(', ')],
        [t('att.issued'), when(att.issued_at)],
        [t('att.expires'), when(att.expires_at)],
        [t('att.issuer'), att.issuer],
        [t('att.key'), h('span', { class: 'mono' }, att.key_id)],
      ]),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', null, t('att.verifications')),
      table(
        [t('att.type'), t('att.verified'), t('att.method')],
        att.verifications.map((v) => [tKnown(`verification.${v.type}`, v.type.replace(/_/g, ' ')), when(v.verified_at), v.method ?? '—']),
      ),
    ),
    revoke,
  );
}
