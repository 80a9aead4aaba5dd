import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The `<style>` elements Swagger UI's scripts create (its logo is an SVG holding one), by their
 * SHA-256, as CSP source expressions. Without them the browser refuses the styles and logs a CSP
 * error on every visit of /docs. They are read from the installed bundles, so an upgrade of Swagger UI
 * brings its own hashes; the browser test of /docs fails if one is missed.
 */
function inlineStyleHashes(): string[] {
  const staticDir = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui/package.json')), 'static');
  const hashes = new Set<string>();
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js']) {
    const source = readFileSync(join(staticDir, file), 'utf8');
    for (const match of source.matchAll(/createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g)) {
      const css = JSON.parse(match[1] as string) as string;
      hashes.add(`'sha256-${createHash('sha256').update(css).digest('base64')}'`);
    }
  }
  return [...hashes];
}

let hashes: string[] | undefined;

/**
 * The Content-Security-Policy of the documentation UI at /docs: everything from this origin, no
 * inline script, the inline styles Swagger UI makes (by hash), no framing by other sites, and nothing
 * loaded from elsewhere (no web fonts, no validator badge). No `upgrade-insecure-requests`: TLS is
 * the proxy's, and a sandbox served over plain HTTP on a LAN address must still load its scripts.
 * "Try it out" calls the API at `publicUrl` (the document's server), which may be another origin
 * than the one serving /docs behind a proxy.
 */
export function docsCsp(publicUrl: string): string {
  hashes ??= inlineStyleHashes();
  return [
    "default-src 'self'",
    "base-uri 'self'",
    "font-src 'self' data:",
    "frame-ancestors 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    `style-src 'self' ${hashes.join(' ')}`.trim(),
    `connect-src 'self' ${new URL(publicUrl).origin}`,
    "form-action 'self'",
  ].join('; ');
}
