import { ApiError, currentSession, onSessionEnd, signOut } from './api.js';
import { h, mount } from './dom.js';
import { accountPage } from './pages/account.js';
import { attestationPage, attestationsPage } from './pages/attestations.js';
import { deadLettersPage, deliveriesPage } from './pages/deliveries.js';
import { endpointPage, endpointsPage } from './pages/endpoints.js';
import { eventPage, eventsPage } from './pages/events.js';
import { marketsPage } from './pages/markets.js';
import { orderPage, ordersPage } from './pages/orders.js';
import { positionsPage } from './pages/positions.js';
import { SESSIONS_SCOPE, sessionsPage } from './pages/sessions.js';
import { signInPage } from './pages/signin.js';
import { LANGUAGES, currentLanguage, onLanguageChange, setLanguage, t, type MessageKey } from './i18n.js';
import { errorBox, href, type Page, type Route } from './ui.js';

/** Hash routes: `#/<section>[/<id>][?query]`. */
function parse(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', q = ''] = raw.split('?', 2);
  return {
    path: path
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent),
    params: new URLSearchParams(q),
  };
}

/** The sections in the navigation; one with a `scope` shows only to a client that has it. */
const SECTIONS: { path: string; label: MessageKey; scope?: string }[] = [
  { path: 'orders', label: 'nav.orders' },
  { path: 'positions', label: 'nav.positions' },
  { path: 'attestations', label: 'nav.attestations' },
  { path: 'events', label: 'nav.events' },
  { path: 'endpoints', label: 'nav.endpoints' },
  { path: 'deliveries', label: 'nav.deliveries' },
  { path: 'dead', label: 'nav.dead' },
  { path: 'markets', label: 'nav.markets' },
  { path: 'sessions', label: 'nav.sessions', scope: SESSIONS_SCOPE },
  { path: 'account', label: 'nav.account' },
];

function visibleSections(): typeof SECTIONS {
  const scopes = currentSession()?.scopes ?? [];
  return SECTIONS.filter((s) => s.scope === undefined || scopes.includes(s.scope));
}

/** Where a client lands: its orders, or the sessions for an operators' client that cannot read orders. */
function home(): string {
  const scopes = currentSession()?.scopes ?? [];
  return !scopes.includes('orders:read') && scopes.includes(SESSIONS_SCOPE) ? 'sessions' : 'orders';
}

function pageFor(route: Route): Page | null {
  const [section, id] = route.path;
  switch (section) {
    case 'orders':
      return id === undefined ? ordersPage : orderPage;
    case 'positions':
      return positionsPage;
    case 'attestations':
      return id === undefined ? attestationsPage : attestationPage;
    case 'events':
      return id === undefined ? eventsPage : eventPage;
    case 'endpoints':
      return id === undefined ? endpointsPage : endpointPage;
    case 'deliveries':
      return deliveriesPage;
    case 'dead':
      return deadLettersPage;
    case 'markets':
      return marketsPage;
    case 'sessions':
      return sessionsPage;
    case 'account':
      return accountPage;
    default:
      return null;
  }
}

const app = document.getElementById('app') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
let signInReason: MessageKey | null = null;
let lastClientId = '';
let renderCount = 0;

/** The visible language switch: each language named in itself, the current one pressed. */
function languageSwitch(): HTMLElement {
  const names: Record<(typeof LANGUAGES)[number], string> = { en: 'English', fr: 'Français' };
  return h(
    'div',
    { class: 'lang', role: 'group', 'aria-label': t('nav.language') },
    LANGUAGES.map((l) => {
      const button = h(
        'button',
        { type: 'button', class: 'link', lang: l, 'data-lang': l, 'aria-pressed': String(l === currentLanguage()) },
        names[l],
      );
      button.addEventListener('click', () => setLanguage(l));
      return button;
    }),
  );
}

function renderNav(route: Route): void {
  const session = currentSession();
  if (session === null) {
    mount(nav, h('div', { class: 'who' }, languageSwitch()));
    return;
  }
  const out = h('button', { type: 'button', class: 'link' }, t('nav.signOut'));
  out.addEventListener('click', () => signOut(null));
  mount(
    nav,
    h(
      'ul',
      null,
      visibleSections().map((s) =>
        h('li', null, h('a', { href: href(s.path), 'aria-current': route.path[0] === s.path ? 'page' : null }, t(s.label))),
      ),
    ),
    h('div', { class: 'who' }, h('span', { class: 'mono small' }, session.clientId), out, languageSwitch()),
  );
}

const brand = document.querySelector('.brand .muted');

async function render(): Promise<void> {
  const route = parse(location.hash);
  if (brand !== null) brand.textContent = t('app.brand');
  nav.setAttribute('aria-label', t('nav.sections'));
  const mine = ++renderCount;
  renderNav(route);
  if (currentSession() === null) {
    document.title = `${t('signin.title')} · ${t('app.title')}`;
    signInPage(app, signInReason, lastClientId, () => {
      signInReason = null;
      if (pageFor(parse(location.hash)) === null) location.hash = href(home());
      else void render();
    });
    return;
  }
  lastClientId = currentSession()?.clientId ?? lastClientId;
  const page = pageFor(route);
  if (page === null) {
    location.replace(href(home()));
    return;
  }
  const section = SECTIONS.find((s) => s.path === route.path[0]);
  document.title = `${section === undefined ? t('app.title') : t(section.label)} · ${t('app.title')}`;
  app.setAttribute('aria-busy', 'true');
  // Each render draws into a view of its own: a page whose answers arrive after the reader moved on
  // draws into a view no longer shown, never over the page shown now.
  const view = h('div', { class: 'view' }, h('p', { class: 'muted' }, t('app.loading')));
  mount(app, view);
  try {
    await page(view, route);
  } catch (error) {
    // A 401 has already ended the session and shown the sign-in page.
    if (!(error instanceof ApiError && error.status === 401)) mount(view, errorBox(error));
  } finally {
    if (mine === renderCount) app.removeAttribute('aria-busy');
  }
  if (mine === renderCount) app.querySelector('h1')?.setAttribute('tabindex', '-1');
}

onSessionEnd((reason) => {
  signInReason = reason;
  void render();
});
window.addEventListener('hashchange', () => void render());
onLanguageChange(() => void render());
void render();
