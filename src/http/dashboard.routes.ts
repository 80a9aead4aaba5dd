import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ApiError } from '../lib/errors.js';

/** Content types of the files the dashboard is made of; any other file is not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * Everything is served from this origin and nothing else is allowed: no inline script or style, no
 * framing, no form posted elsewhere. The dashboard only talks to the API of the same origin.
 */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface Asset {
  body: Buffer;
  type: string;
}

export interface DashboardRouteOptions {
  /** The dashboard folder (holding `public/` and the compiled `dist/`); default: the repository's. */
  root?: string;
}

/** The repository's `dashboard/` folder, from this file's compiled place (`dist/src/http/`). */
function defaultRoot(): string {
  return fileURLToPath(new URL('../../../dashboard/', import.meta.url));
}

/** Every servable file under `dir`, by its path relative to `dir` with `/` separators. */
function collect(dir: string, prefix: string, out: Map<string, Asset>): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      collect(path, `${prefix}${name}/`, out);
      continue;
    }
    const type = CONTENT_TYPES[extname(name)];
    if (type !== undefined && !out.has(`${prefix}${name}`)) out.set(`${prefix}${name}`, { body: readFileSync(path), type });
  }
}

/**
 * The developer dashboard (docs/dashboard.md): static files only, a single-page application that calls
 * the public API with the developer's own access token. The files are read once, when the plugin is
 * registered, into a table keyed by name; a request is answered only when its path is a key of that
 * table, so no path (`..`, encoded slashes, absolute paths) can reach any other file.
 */
export const dashboardRoutes: FastifyPluginAsync<DashboardRouteOptions> = async (app, options) => {
  const root = options.root ?? defaultRoot();
  const assets = new Map<string, Asset>();
  // `public/` (HTML, CSS) wins over `dist/` (the compiled scripts) when a name is in both.
  collect(join(root, 'public'), '', assets);
  collect(join(root, 'dist'), '', assets);

  const send = (reply: FastifyReply, name: string) => {
    const asset = assets.get(name);
    if (asset === undefined) throw new ApiError('not_found', `No dashboard file ${name}`);
    return reply
      .header('content-type', asset.type)
      .header('content-security-policy', DASHBOARD_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cache-control', 'no-cache')
      .send(asset.body);
  };

  const hide = { schema: { hide: true } };
  app.get('/dashboard', hide, async (_request, reply) => send(reply, 'index.html'));
  app.get<{ Params: { '*': string } }>('/dashboard/*', hide, async (request, reply) =>
    send(reply, request.params['*'] === '' ? 'index.html' : request.params['*']),
  );
};
