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
import { errorBox, href, type Page, type Route } from './ui.js';

/** Hash routes: `#/<section>[/<id>][?query]`. */
function parse(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', q = ''] = raw.split('?', 2);
  return { path: path.split('/').filter((p) => p !== '').map(decodeURIComponent), params: new URLSearchParams(q) };
}

/** The sections in the navigation; one with a `scope` shows only to a client that has it. */
const SECTIONS: { path: string; label: string; scope?: string }[] = [
  { path: 'orders', label: 'Orders' },
  { path: 'positions', label: 'Positions' },
  { path: 'attestations', label: 'Attestations' },
  { path: 'events', label: 'Events' },
  { path: 'endpoints', label: 'Endpoints' },
  { path: 'deliveries', label: 'Deliveries' },
  { path: 'dead', label: 'Dead letters' },
  { path: 'markets', label: 'Markets' },
  { path: 'sessions', label: 'FIX sessions', scope: SESSIONS_SCOPE },
  { path: 'account', label: 'Account' },
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
let signInReason: string | null = null;
let lastClientId = '';
let renderCount = 0;

function renderNav(route: Route): void {
  const session = currentSession();
  if (session === null) {
    mount(nav);
    return;
  }
  const out = h('button', { type: 'button', class: 'link' }, 'Sign out');
  out.addEventListener('click', () => signOut(null));
  mount(
    nav,
    h('ul', null, visibleSections().map((s) => h('li', null, h('a', { href: href(s.path), 'aria-current': route.path[0] === s.path ? 'page' : null }, s.label)))),
    h('div', { class: 'who' }, h('span', { class: 'mono small' }, session.clientId), out),
  );
}

async function render(): Promise<void> {
  const route = parse(location.hash);
  const mine = ++renderCount;
  renderNav(route);
  if (currentSession() === null) {
    document.title = 'Sign in · cauri dashboard';
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
  document.title = `${section?.label ?? 'Dashboard'} · cauri dashboard`;
  app.setAttribute('aria-busy', 'true');
  mount(app, h('p', { class: 'muted' }, 'Loading…'));
  try {
    await page(app, route);
  } catch (error) {
    // A 401 has already ended the session and shown the sign-in page.
    if (mine === renderCount && !(error instanceof ApiError && error.status === 401)) mount(app, errorBox(error));
  } finally {
    app.removeAttribute('aria-busy');
  }
  if (mine === renderCount) app.querySelector('h1')?.setAttribute('tabindex', '-1');
}

onSessionEnd((reason) => {
  signInReason = reason;
  void render();
});
window.addEventListener('hashchange', () => void render());
void render();
