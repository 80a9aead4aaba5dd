import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenFailure } from '../../src/cli/commands/serve.js';
import { allCommands, cliLanguageOf, commandPath, helpKeys, sayCount, saySeconds, useCliLanguage } from '../../src/cli/i18n.js';
import { FR_HELP } from '../../src/cli/i18n/help.fr.js';
import { MESSAGES } from '../../src/cli/i18n/messages.js';
import { buildProgram } from '../../src/cli/program.js';
import { runCli } from '../support/process.js';

const placeholders = (text: string): string[] => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();

test('every command, argument and option has its French help, and the French help names nothing else', async () => {
  const program = await buildProgram('en');
  const keys = allCommands(program).flatMap((c) => helpKeys(c));
  assert.ok(keys.length > 100, `${keys.length} help texts`);
  for (const { key, english } of keys) {
    assert.ok(FR_HELP[key] !== undefined, `no French help for "${key}"`);
    assert.notEqual(english.trim(), '', `no English help for "${key}"`);
  }
  const known = new Set(keys.map((k) => k.key));
  for (const key of Object.keys(FR_HELP)) assert.ok(known.has(key), `French help for "${key}", which does not exist`);
  // And it is what the French tree shows.
  const french = await buildProgram('fr');
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

test("counts and decimals follow the language's rules; a listening failure in the run's language", (t) => {
  t.after(() => useCliLanguage('en'));
  const expired = (n: number) => sayCount({ one: 'clients.expired.one', other: 'clients.expired.other' }, n, { id: 'cli_1' });
  useCliLanguage('en');
  assert.deepEqual(
    [expired(0), expired(1), expired(2)],
    [
      'cli_1: 0 previous secrets stopped working now',
      'cli_1: 1 previous secret stopped working now',
      'cli_1: 2 previous secrets stopped working now',
    ],
  );
  assert.equal(saySeconds(1500), '1.5');
  useCliLanguage('fr');
  // In French, 0 and 1 take the singular.
  assert.deepEqual(
    [expired(0), expired(1), expired(2)],
    [
      'cli_1 : 0 secret précédent a cessé de fonctionner',
      'cli_1 : 1 secret précédent a cessé de fonctionner',
      'cli_1 : 2 secrets précédents ont cessé de fonctionner',
    ],
  );
  assert.equal(saySeconds(1500), '1,5');
  assert.match(
    listenFailure({ code: 'EADDRINUSE' }, '::1', 8080) ?? '',
    /^impossible d'écouter sur \[::1\]:8080 : l'adresse est déjà utilisée/,
  );
});

test('operator commands in French: what they did, their refusals and the words of their tables', { timeout: 120_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-cli-i18n-operator-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dataDir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SEED: 'false' };
  const fr = { ...env, LANG: 'fr_FR.UTF-8' };

  const role = await runCli(['serve', '--role', 'web'], fr);
  assert.deepEqual([role.code, role.stderr], [1, "cauri: --role doit être l'un de api, worker, all (reçu « web »)\n"]);
  const migrated = await runCli(['migrate'], fr);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.match(migrated.stdout, /^Appliquées : /m);
  assert.match(migrated.stdout, /^Calendriers livrés écrits : /m);
  assert.match((await runCli(['migrate'], fr)).stdout, /^La base de données est à jour\.$/m);

  const created = await runCli(['clients', 'create', '--name', 'dakar-app'], fr);
  assert.equal(created.code, 0, created.stderr);
  assert.match(
    created.stdout,
    /^client_id: +cli_[0-9a-z]{26}\n[\s\S]*\n\nLe secret n'est affiché que maintenant ; conservez-le en lieu sûr\.\n$/,
  );
  const id = /^client_id: +(cli_[0-9a-z]{26})$/m.exec(created.stdout)?.[1] as string;
  assert.equal((await runCli(['clients', 'expire-previous-secret', id], fr)).stdout, `${id} n'a plus de secret précédent en service\n`);
  const rotated = await runCli(['clients', 'rotate-secret', id], fr);
  assert.match(rotated.stdout, /^le secret précédent cesse de fonctionner le \d{4}-/m);
  assert.equal((await runCli(['clients', 'expire-previous-secret', id], fr)).stdout, `${id} : 1 secret précédent a cessé de fonctionner\n`);
  assert.equal((await runCli(['clients', 'disable', id], fr)).stdout, `${id} désactivé\n`);
  assert.equal((await runCli(['clients', 'enable', id], env)).stdout, `${id} enabled\n`, 'English without a French locale');
  const nobody = await runCli(['clients', 'disable', 'cli_00000000000000000000000000'], fr);
  assert.deepEqual([nobody.code, nobody.stderr], [1, 'cauri: aucun client cli_00000000000000000000000000\n']);
  const scope = await runCli(['clients', 'create', '--name', 'x', '--scopes', 'orders:fly'], fr);
  assert.match(scope.stderr, /^cauri: portée inconnue orders:fly ; les portées sont : /);

  const purpose = await runCli(['keys', 'rotate', '--purpose', 'nope'], fr);
  assert.equal(purpose.stderr, 'cauri: --purpose doit valoir attestation ou token (reçu « nope »)\n');
  const key = await runCli(['keys', 'rotate'], fr);
  assert.match(key.stdout, /^clé attestation renouvelée : \S+ -> key_[0-9a-z]{26} le \d{4}-/);
  const date = await runCli(['audit', 'snapshot', '--date', 'yesterday'], fr);
  assert.equal(date.stderr, 'cauri: --date doit être un jour au format AAAA-MM-JJ (reçu « yesterday »)\n');

  const exchange = await runCli(['calendars', 'show', 'NYSE'], fr);
  assert.match(exchange.stderr, /^cauri: bourse inconnue NYSE \(parmi BRVM, /);
  const shown = await runCli(['calendars', 'show', 'BRVM'], fr);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^date +day +timetable +provisional +name$/m, 'the column names stay the API members');
  assert.match(shown.stdout, /^\d{4}-\d\d-\d\d +(lun|mar|mer|jeu|ven|sam|dim)\. +fermé +/m);
  const english = await runCli(['calendars', 'show', 'BRVM'], env);
  assert.match(english.stdout, /^\d{4}-\d\d-\d\d +(Mon|Tue|Wed|Thu|Fri|Sat|Sun) +closed +/m);

  const fees = await runCli(['fees', 'list', '--owner', 'BRVM'], fr);
  assert.equal(fees.code, 0, fees.stderr);
  assert.match(fees.stdout, /^scope +id +effective_from +origin +charges$/m);
  assert.match(fees.stdout, / pb, [a-z_]+\/\d+ : /);
});
