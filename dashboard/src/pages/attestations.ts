import { call, REVOCATION_REASONS, type Attestation, type AttestationStatus } from '../api.js';
import { field, h, mount } from '../dom.js';
import { when } from '../format.js';
import { badge, busy, facts, go, heading, href, notice, table, type Route } from '../ui.js';

function lookupForm(current = ''): HTMLFormElement {
  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h('label', { class: 'grow' }, 'Attestation id', h('input', { name: 'id', value: current, placeholder: 'att_…', required: true, spellcheck: 'false', autocomplete: 'off' })),
    h('button', { type: 'submit' }, 'Open'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go(`attestations/${encodeURIComponent(field(form, 'id'))}`);
  });
  return form;
}

/** The API has no attestation listing (they are read by id), so the page starts with a look-up. */
export async function attestationsPage(view: HTMLElement): Promise<void> {
  mount(view, heading('Attestations'), h('p', null, 'Open an attestation by its id to see its status or revoke it.'), lookupForm());
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
    const button = h('button', { type: 'submit', class: 'danger' }, 'Revoke attestation');
    const form = h(
      'form',
      { class: 'stack' },
      h('p', null, 'Revocation is final: the attestation is added to the signed revocation list and relying parties will refuse it.'),
      h('label', null, 'Reason', h('select', { name: 'reason' }, REVOCATION_REASONS.map((r) => h('option', { value: r }, r.replace(/_/g, ' '))))),
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
    revoke = h('section', { class: 'card' }, h('h2', null, 'Revoke'), form);
  }

  mount(
    view,
    heading(`Attestation ${att.id}`, h('a', { href: href('attestations'), class: 'button secondary' }, 'Open another')),
    status.status === 'revoked' ? notice(`Revoked on ${when(status.revoked_at)} (${(status.reason ?? 'no reason').replace(/_/g, ' ')}).`, 'info') : null,
    h('section', { class: 'card' },
      facts([
        ['Status', h('span', { 'data-testid': 'attestation-status' }, badge(status.status))],
        ['Subject', h('span', { class: 'mono' }, att.subject_id)],
        ['Level', att.level],
        ['Jurisdictions', att.jurisdictions.join(', ')],
        ['Issued', when(att.issued_at)],
        ['Expires', when(att.expires_at)],
        ['Issuer', att.issuer],
        ['Signing key', h('span', { class: 'mono' }, att.key_id)],
      ]),
    ),
    h('section', { class: 'card' },
      h('h2', null, 'Verifications'),
      table(['Type', 'Verified', 'Method'], att.verifications.map((v) => [v.type.replace(/_/g, ' '), when(v.verified_at), v.method ?? '—'])),
    ),
    revoke,
  );
}
