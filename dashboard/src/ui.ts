import { ApiError } from './api.js';
import { h, type Child } from './dom.js';
import { t, tKnown } from './i18n.js';

/** The hash route being shown: `#/orders/ord_1?status=filled` is path ['orders', 'ord_1'] and its query. */
export interface Route {
  path: string[];
  params: URLSearchParams;
}

export type Page = (view: HTMLElement, route: Route) => Promise<void>;

export function href(path: string, params: Record<string, string | undefined | null> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return `#/${path}${s === '' ? '' : `?${s}`}`;
}

export function go(path: string, params: Record<string, string | undefined | null> = {}): void {
  location.hash = href(path, params);
}

/**
 * An API error as the user should read it: what its `code` means in the user's language, the API's
 * own message (English, stable: docs/errors.md), each invalid field, and the request id for support.
 * An error of the dashboard itself (status 0) is in the user's language only.
 */
export function errorBox(error: unknown): HTMLElement {
  if (!(error instanceof ApiError))
    return h('div', { class: 'alert error', role: 'alert' }, t('error.unexpected'), ' ', h('span', { lang: 'en' }, String(error)));
  const summary = tKnown(`error.${error.code}`, t('error.other', { code: error.code }), error.params);
  return h(
    'div',
    { class: 'alert error', role: 'alert', 'data-code': error.code },
    h('p', null, h('strong', null, summary)),
    error.status === 0 ? null : h('p', { lang: 'en', class: 'small' }, error.message),
    error.details.length > 0
      ? h(
          'ul',
          { lang: 'en' },
          error.details.map((d) => h('li', null, `${d.field}: ${d.message ?? d.rule}`)),
        )
      : null,
    error.requestId === null ? null : h('p', { class: 'muted small' }, t('error.requestId', { id: error.requestId })),
  );
}

export function notice(text: Child, kind: 'success' | 'info' = 'success'): HTMLElement {
  return h('div', { class: `alert ${kind}`, role: 'status' }, text);
}

/** A status as a coloured badge, in the user's language (`status.<value>` of the catalogues). */
export function badge(status: string, kind?: 'delivery'): HTMLElement {
  const words = tKnown(`status.${status}`, status.replace(/_/g, ' '));
  return h(
    'span',
    { class: `badge badge-${status.replace(/[^a-z_]/g, '')}`, 'data-status': status },
    // A word that agrees with what it describes where the language needs it (une livraison annulée).
    kind === undefined ? words : tKnown(`status.${kind}.${status}`, words),
  );
}

/** A secret shown once: selectable in one click, with the warning that it will not be shown again. */
export function secretBox(title: string, secret: string, extra: Child = null): HTMLElement {
  const input = h('input', {
    type: 'text',
    readonly: true,
    value: secret,
    class: 'secret',
    'aria-label': title,
    'data-testid': 'secret',
    spellcheck: 'false',
  });
  input.addEventListener('focus', () => input.select());
  const copy = h('button', { type: 'button', class: 'secondary' }, t('secret.copy'));
  copy.addEventListener('click', () => {
    input.select();
    void navigator.clipboard?.writeText(secret).then(
      () => (copy.textContent = t('secret.copied')),
      () => document.execCommand('copy'),
    );
  });
  return h(
    'div',
    { class: 'alert secret-box', role: 'status' },
    h('p', null, h('strong', null, title)),
    h('p', { class: 'small' }, t('secret.once')),
    h('div', { class: 'secret-row' }, input, copy),
    extra,
  );
}

/** A definition list from label/value pairs; values may be nodes. */
export function facts(rows: [string, Child][]): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v ?? '—')]),
  );
}

/**
 * A table that becomes a list of cards on a narrow screen: each cell carries its column's name
 * (`data-label`), which the phone stylesheet shows in front of the value.
 */
export function table(columns: string[], rows: Child[][], empty = t('table.empty')): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'table',
    { class: 'grid' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((cells) =>
        h(
          'tr',
          null,
          cells.map((cell, i) => h('td', { 'data-label': columns[i] ?? '' }, cell)),
        ),
      ),
    ),
  );
}

/** Newer/older links from the X-Cursor-Prev and X-Cursor-Next headers of a listing. */
export function pager(headers: Headers, path: string, params: Record<string, string | undefined>): HTMLElement | null {
  const prev = headers.get('x-cursor-prev') ?? '';
  const next = headers.get('x-cursor-next') ?? '';
  if (prev === '' && next === '') return null;
  return h(
    'nav',
    { class: 'pager', 'aria-label': t('pager.label') },
    prev === ''
      ? h('span', { class: 'muted' }, t('pager.newer'))
      : h('a', { href: href(path, { ...params, cursor: prev }), class: 'button secondary' }, t('pager.newer')),
    next === ''
      ? h('span', { class: 'muted' }, t('pager.older'))
      : h('a', { href: href(path, { ...params, cursor: next }), class: 'button secondary' }, t('pager.older')),
  );
}

export function heading(title: string, ...actions: Child[]): HTMLElement {
  return h('div', { class: 'page-head' }, h('h1', null, title), actions.length > 0 ? h('div', { class: 'actions' }, actions) : null);
}

/** Runs a form action, disabling its button meanwhile and putting its outcome in `out`. */
export function busy(button: HTMLButtonElement, out: HTMLElement, action: () => Promise<Node | null>): void {
  button.disabled = true;
  out.replaceChildren();
  action()
    .then((result) => {
      if (result !== null) out.replaceChildren(result);
    })
    .catch((error: unknown) => {
      if (!(error instanceof ApiError && error.status === 401)) out.replaceChildren(errorBox(error));
    })
    .finally(() => {
      button.disabled = false;
    });
}
