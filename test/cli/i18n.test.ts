import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allCommands, cliLanguageOf, commandPath, helpKeys } from '../../src/cli/i18n.js';
import { FR_HELP } from '../../src/cli/i18n/help.fr.js';
import { MESSAGES } from '../../src/cli/i18n/messages.js';
import { buildProgram } from '../../src/cli/program.js';
import { runCli } from '../support/process.js';

const placeholders = (text: string): string[] => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();

test('every command, argument and option has its French help, and the French help names nothing else', () => {
  const program = buildProgram('en');
  const keys = allCommands(program).flatMap((c) => helpKeys(c));
  assert.ok(keys.length > 100, `${keys.length} help texts`);
  for (const { key, english } of keys) {
    assert.ok(FR_HELP[key] !== undefined, `no French help for "${key}"`);
    assert.notEqual(english.trim(), '', `no English help for "${key}"`);
  }
  const known = new Set(keys.map((k) => k.key));
  for (const key of Object.keys(FR_HELP)) assert.ok(known.has(key), `French help for "${key}", which does not exist`);
  // And it is what the French tree shows.
  const french = buildProgram('fr');
  const orders = allCommands(french).find((c) => commandPath(c) === 'orders list');
  assert.equal(orders?.description(), FR_HELP['orders list']);
});

test('the messages: the same keys in English and French, the same values, none empty', () => {
  assert.deepEqual(Object.keys(MESSAGES.fr).sort(), Object.keys(MESSAGES.en).sort());
  for (const [key, english] of Object.entries(MESSAGES.en)) {
    const french = (MESSAGES.fr as Record<string, string>)[key] ?? '';
    assert.notEqual(french.trim(), '', key);
    assert.notEqual(french, english, `${key} is not translated`);
    assert.deepEqual(placeholders(french), placeholders(english), key);
  }
});

test('the language: --lang anywhere on the line, else LC_ALL, LC_MESSAGES, LANG, else English', () => {
  const run = (argv: string[], env: NodeJS.ProcessEnv) => cliLanguageOf(['node', 'cauri', ...argv], env);
  assert.deepEqual(run(['orders', 'list', '--lang', 'fr', '--json'], {}), {
    language: 'fr',
    argv: ['node', 'cauri', 'orders', 'list', '--json'],
  });
  assert.equal(run(['--lang=en', 'orders'], { LANG: 'fr_FR.UTF-8' }).language, 'en');
  assert.equal(run([], { LANG: 'fr_CI.UTF-8' }).language, 'fr');
  assert.equal(run([], { LANG: 'fr' }).language, 'fr');
  assert.equal(run([], { LC_ALL: 'en_GB.UTF-8', LANG: 'fr_FR.UTF-8' }).language, 'en', 'LC_ALL first');
  assert.equal(run([], { LC_MESSAGES: 'fr_SN.UTF-8', LANG: 'en_US.UTF-8' }).language, 'fr', 'then LC_MESSAGES');
  assert.equal(run([], { LANG: 'C.UTF-8' }).language, 'en');
  assert.equal(run([], { LANG: 'french' }).language, 'en', 'not a French locale name');
  assert.equal(run([], {}).language, 'en');
  assert.deepEqual(
    run(['listen', '--', '--lang', 'fr'], {}).argv,
    ['node', 'cauri', 'listen', '--', '--lang', 'fr'],
    'after --, an argument',
  );
  assert.throws(() => run(['--lang', 'de'], {}), /--lang must be en or fr \(got "de"\)/);
});

test("cauri in French: help, commander's errors and the command's own messages; --lang en overrides the locale", async (t) => {
  const config = mkdtempSync(join(tmpdir(), 'cauri-cli-i18n-'));
  t.after(() => rmSync(config, { recursive: true, force: true }));
  const fr = { LANG: 'fr_FR.UTF-8', CAURI_CONFIG_DIR: config };
  const help = await runCli(['orders', 'list', '--help'], fr);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Utilisation : cauri orders list \[options\]/);
  assert.match(help.stdout, /Lister les ordres, du plus récent au plus ancien/);
  assert.match(help.stdout, /--status <status> +seulement ce statut/);
  assert.match(help.stdout, /-h, --help +afficher l'aide de la commande/);
  assert.doesNotMatch(help.stdout, /newest first|Usage:/);

  const root = await runCli(['--help'], fr);
  assert.match(root.stdout, /Routage d'ordres vers les SGI/);
  assert.match(root.stdout, /--lang <language> +langue des messages et de l'aide/);

  const english = await runCli(['orders', 'list', '--help', '--lang', 'en'], fr);
  assert.match(english.stdout, /^Usage: cauri orders list \[options\]/);
  assert.match(english.stdout, /List orders, newest first/);
  const inEnglish = await runCli(['orders', 'list', '--help'], {});
  assert.equal(inEnglish.stdout, english.stdout, 'without a French locale, English');

  const unknown = await runCli(['orders', 'list', '--nope'], fr);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /^erreur : option inconnue '--nope'/m);

  const limit = await runCli(['orders', 'list', '--limit', '0'], fr);
  assert.equal(limit.code, 1);
  assert.equal(limit.stderr, 'cauri: --limit doit être un entier de 1 à 200 (reçu « 0 »)\n');
  const limitEn = await runCli(['orders', 'list', '--limit', '0'], { LANG: 'fr_FR.UTF-8', LC_ALL: 'en_US.UTF-8' });
  assert.equal(limitEn.stderr, 'cauri: --limit must be an integer from 1 to 200 (got "0")\n');

  const none = await runCli(['orders', 'get', 'ord_1', '--lang', 'fr'], {
    CAURI_API_URL: '',
    CAURI_CLIENT_ID: '',
    CAURI_CLIENT_SECRET: '',
    CAURI_CONFIG_DIR: '/nonexistent-cauri-config',
  });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^cauri: aucun identifiant : lancez cauri login/);

  const listen = await runCli(['listen', '--forward-to', 'http://127.0.0.1:9/', '--after', 'evt_1', '--from-now'], fr);
  assert.equal(listen.stderr, 'cauri: --after et --from-now ne vont pas ensemble\n');
  const trigger = await runCli(['trigger', 'order.nope'], {
    ...fr,
    CAURI_API_URL: 'http://127.0.0.1:9',
    CAURI_CLIENT_ID: 'cli_x',
    CAURI_CLIENT_SECRET: 'sk_test_x',
  });
  assert.match(trigger.stderr, /^cauri: type d'événement inconnu « order\.nope » ; les types sont : order\.created, /);

  const bad = await runCli(['--lang', 'de', 'orders'], fr);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, 'cauri: --lang doit valoir en ou fr (reçu « de »)\n', "refused in the locale's language");
});
