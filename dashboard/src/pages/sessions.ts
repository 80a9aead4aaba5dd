import { call } from '../api.js';
import { h, mount } from '../dom.js';
import { when } from '../format.js';
import { t } from '../i18n.js';
import { badge, heading, table } from '../ui.js';

/** One FIX partner's session (`GET /v1/operator/fix-sessions`). */
interface FixSession {
  partner_id: string;
  partner_name: string | null;
  state: 'connecting' | 'logged_on' | 'disconnected' | 'outside_window';
  sender_comp_id: string;
  target_comp_id: string;
  next_sender_seq: number;
  next_target_seq: number;
  last_logon_at: string | null;
  last_sent_at: string | null;
  last_received_at: string | null;
  held_by: string | null;
  last_error: string | null;
}

/** The scope this page needs: the operator grants it to a client of its own, never by default. */
export const SESSIONS_SCOPE = 'operator:read';

/**
 * The FIX partners' sessions, for operators: what `cauri partners sessions` shows. Integrators'
 * clients do not have the scope: the sessions carry every client's orders to the SGI.
 */
export async function sessionsPage(view: HTMLElement): Promise<void> {
  const { body } = await call<{ data: FixSession[] }>('GET', '/v1/operator/fix-sessions');
  const refresh = h('button', { type: 'button', class: 'secondary' }, t('sessions.refresh'));
  refresh.addEventListener('click', () => void sessionsPage(view));
  mount(
    view,
    heading(t('nav.sessions'), refresh),
    h(
      'section',
      { class: 'card' },
      table(
        [
          t('sessions.partner'),
          t('sessions.state'),
          'CompIDs',
          t('sessions.seqOut'),
          t('sessions.seqIn'),
          t('sessions.lastLogon'),
          t('sessions.lastSent'),
          t('sessions.lastReceived'),
          t('sessions.heldBy'),
          t('sessions.lastError'),
        ],
        body.data.map((s) => [
          h('span', null, s.partner_name ?? '', h('br'), h('span', { class: 'mono small' }, s.partner_id)),
          h('span', { 'data-testid': `state-${s.partner_id}` }, badge(s.state)),
          h('span', { class: 'mono small' }, `${s.sender_comp_id} → ${s.target_comp_id}`),
          h('span', { 'data-testid': `seq-out-${s.partner_id}` }, String(s.next_sender_seq)),
          h('span', { 'data-testid': `seq-in-${s.partner_id}` }, String(s.next_target_seq)),
          when(s.last_logon_at),
          when(s.last_sent_at),
          when(s.last_received_at),
          s.held_by === null ? '—' : h('span', { class: 'mono small' }, s.held_by),
          s.last_error === null ? '—' : h('span', { class: 'small', lang: 'en', 'data-testid': `error-${s.partner_id}` }, s.last_error),
        ]),
        t('sessions.none'),
      ),
      h('p', { class: 'muted small' }, t('sessions.rule')),
    ),
  );
}
