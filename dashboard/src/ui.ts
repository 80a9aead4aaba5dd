import { ApiError } from './api.js';
import { h, type Child } from './dom.js';

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

/** An API error as the user should read it: the message, each invalid field, and the request id for support. */
export function errorBox(error: unknown): HTMLElement {
  if (!(error instanceof ApiError)) return h('div', { class: 'alert error', role: 'alert' }, String(error));
  return h(
    'div',
    { class: 'alert error', role: 'alert' },
    h('p', null, error.message),
    error.details.length > 0 ? h('ul', null, error.details.map((d) => h('li', null, `${d.field}: ${d.message ?? d.rule}`))) : null,
    error.requestId === null ? null : h('p', { class: 'muted small' }, `Request id: ${error.requestId}`),
  );
}

export function notice(text: Child, kind: 'success' | 'info' = 'success'): HTMLElement {
  return h('div', { class: `alert ${kind}`, role: 'status' }, text);
}

export function badge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status.replace(/[^a-z_]/g, '')}` }, status.replace(/_/g, ' '));
}

/** A secret shown once: selectable in one click, with the warning that it will not be shown again. */
export function secretBox(title: string, secret: string, extra: Child = null): HTMLElement {
  const input = h('input', { type: 'text', readonly: true, value: secret, class: 'secret', 'aria-label': title, 'data-testid': 'secret', spellcheck: 'false' });
  input.addEventListener('focus', () => input.select());
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', () => {
    input.select();
    void navigator.clipboard?.writeText(secret).then(() => (copy.textContent = 'Copied'), () => document.execCommand('copy'));
  });
  return h(
    'div',
    { class: 'alert secret-box', role: 'status' },
    h('p', null, h('strong', null, title)),
    h('p', { class: 'small' }, 'Copy it now: it is shown only once and cannot be retrieved later.'),
    h('div', { class: 'secret-row' }, input, copy),
    extra,
  );
}

/** A definition list from label/value pairs; values may be nodes. */
export function facts(rows: [string, Child][]): HTMLElement {
  return h('dl', { class: 'facts' }, rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v ?? '—')]));
}

/**
 * A table that becomes a list of cards on a narrow screen: each cell carries its column's name
 * (`data-label`), which the phone stylesheet shows in front of the value.
 */
export function table(columns: string[], rows: Child[][], empty = 'Nothing to show.'): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'table',
    { class: 'grid' },
    h('thead', null, h('tr', null, columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, rows.map((cells) => h('tr', null, cells.map((cell, i) => h('td', { 'data-label': columns[i] ?? '' }, cell))))),
  );
}

/** Newer/older links from the X-Cursor-Prev and X-Cursor-Next headers of a listing. */
export function pager(headers: Headers, path: string, params: Record<string, string | undefined>): HTMLElement | null {
  const prev = headers.get('x-cursor-prev') ?? '';
  const next = headers.get('x-cursor-next') ?? '';
  if (prev === '' && next === '') return null;
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    prev === '' ? h('span', { class: 'muted' }, '← Newer') : h('a', { href: href(path, { ...params, cursor: prev }), class: 'button secondary' }, '← Newer'),
    next === '' ? h('span', { class: 'muted' }, 'Older →') : h('a', { href: href(path, { ...params, cursor: next }), class: 'button secondary' }, 'Older →'),
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
