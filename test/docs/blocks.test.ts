import { test } from 'node:test';
import assert from 'node:assert/strict';
import { documents, readDocument } from './documents.js';
import { fencedBlocks, isShell, NOT_RUN, notRunMark } from './markdown.js';

/**
 * Every shell block of README.md and docs/ that the docs run leaves out, by document, mark and first
 * line. A new block runs unless it is marked, and a new mark fails here until it is listed: what a
 * reader cannot paste as written is a short list someone decided on, never an accident.
 */
const NOT_RUN_BLOCKS = [
  'README.md service: npm install && npm start   # the service in sandbox mode at http://127.0.0.1:8080 (SQLite under ./data)',
  'README.md long: npm test                   # every test; storage tests also on PostgreSQL when TEST_DATABASE_URL is set',
  'README.md env: BASE=http://127.0.0.1:8080',
  'docs/api-conventions.md long: npx tsc -b',
  'docs/benchmarks-webhooks.md long: npm run bench:webhooks                                   # rewrites this file (about a minute)',
  'docs/benchmarks.md long: npm run bench                                  # every scenario, defaults below; rewrites this file',
  'docs/cli.md production: DATABASE_URL=postgres://cauri@db/cauri CAURI_MASTER_KEY=... npx cauri clients list',
  'docs/cli.md env: export HOOK_PORT=3000',
  'docs/fix.md production: printf \'%s\\n\' "$SGI_FIX_PASSWORD" | npx cauri partners credentials sgi_01jd... --username CAURI01 --password-stdin',
  'docs/fix.md production: npx cauri partners tls sgi_01jd... --cert cauri-client.pem --key cauri-client.key --ca sgi-gateway-ca.pem',
  'docs/fix.md production: ORDER=$(curl -s -X POST "$BASE/v1/orders" \\',
  'docs/getting-started.md service: npm install && npm start',
  'docs/getting-started.md env: export BASE=http://127.0.0.1:8080',
  'docs/getting-started.md env: export HOOK_PORT=4242',
  'docs/packages.md long: # In a clone, built (npm install has run):',
  'docs/packages.md long: npm install ../cauri-packages/cauri-verifier-0.1.0.tgz ../cauri-packages/cauri-sdk-0.1.0.tgz',
  'docs/packages.md service: # The service itself, outside a clone (SQLite under ./data, sandbox mode):',
  'docs/packages.md production: npm publish -w @cauri/verifier && npm publish -w @cauri/sdk && npm publish',
  'docs/production.md production: CAURI_MODE=production',
  'docs/production.md production: DATABASE_URL=postgres://cauri:...@db.internal:5432/cauri',
  'docs/production.md production: DATABASE_URL=postgres://... CAURI_MASTER_KEY=... CAURI_PUBLIC_URL=https://api.example.com \\',
  'docs/production.md production: REDIS_URL=redis://redis.internal:6379',
  'docs/production.md production: CAURI_ANCHOR=evm',
  'docs/fr/demarrage.md service: npm install && npm start',
  'docs/fr/demarrage.md env: export BASE=http://127.0.0.1:8080',
  'docs/fr/demarrage.md env: export HOOK_PORT=4242',
];

/** The variables the docs run sets itself (see runDocument), the only ones an `env` block may set. */
const RUN_SETS = new Set(['BASE', 'HOOK_PORT']);

test('the shell blocks the docs run leaves out are exactly the listed ones', () => {
  const found: string[] = [];
  for (const doc of documents()) {
    for (const block of fencedBlocks(readDocument(doc)).filter(isShell)) {
      const mark = notRunMark(block);
      if (mark !== undefined) found.push(`${doc} ${mark}: ${block.code.split('\n')[0]}`);
    }
  }
  assert.deepEqual(found, NOT_RUN_BLOCKS);
});

test('a shell block carries no word but one mark in its info string', () => {
  for (const doc of documents()) {
    for (const block of fencedBlocks(readDocument(doc)).filter(isShell)) {
      const where = `${doc}:${block.line}`;
      assert.ok(block.attributes.length <= 1, `${where}: one mark at most, got ${block.attributes.join(' ')}`);
      for (const word of block.attributes)
        assert.ok(Object.hasOwn(NOT_RUN, word), `${where}: "${word}" is not one of ${Object.keys(NOT_RUN).join(', ')}`);
    }
  }
});

test('an env block only sets the addresses the docs run sets itself', () => {
  for (const doc of documents()) {
    for (const block of fencedBlocks(readDocument(doc)).filter((b) => isShell(b) && notRunMark(b) === 'env')) {
      for (const line of block.code.split('\n').filter((l) => l.trim() !== '')) {
        const name = /^(?:export )?([A-Z_]+)=\S+$/.exec(line)?.[1];
        assert.ok(
          name !== undefined && RUN_SETS.has(name),
          `${doc}:${block.line}: "${line}" is not an assignment of ${[...RUN_SETS].join(' or ')}`,
        );
      }
    }
  }
});

test('a service block starts the service and does nothing else', () => {
  for (const doc of documents()) {
    for (const block of fencedBlocks(readDocument(doc)).filter((b) => isShell(b) && notRunMark(b) === 'service')) {
      const commands = block.code
        .split('\n')
        .map((l) => l.replace(/#.*$/, '').trim())
        .filter((l) => l !== '');
      const last = commands.at(-1) ?? '';
      assert.ok(/(?:npm start|npx cauri serve)$/.test(last), `${doc}:${block.line}: ends with the service's start, got "${last}"`);
      for (const command of commands.slice(0, -1)) assert.match(command, /^npm install\b/, `${doc}:${block.line}`);
    }
  }
});
