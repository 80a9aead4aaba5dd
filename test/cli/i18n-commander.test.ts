import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allCommands, commandPath, sayCount, useCliLanguage } from '../../src/cli/i18n.js';
import { MESSAGES } from '../../src/cli/i18n/messages.js';
import { buildProgram } from '../../src/cli/program.js';
import { runCli } from '../support/process.js';

/** The words commander itself adds to a help page or an error, which the French pages must not keep. */
const COMMANDER_ENGLISH = /\(default: |\bchoices: |\bpreset: |\benv: |\[command\]|Expected \d+ arguments?|but got \d+| for '/;

test("every command's French help puts commander's own words in French: defaults, usage, the help command", async () => {
  const program = await buildProgram('fr');
  const english = await buildProgram('en');
  for (const command of allCommands(program)) {
    const help = command.helpInformation();
    assert.doesNotMatch(help, COMMANDER_ENGLISH, `cauri ${commandPath(command)} --help in French:\n${help}`);
  }
  const limit = (await buildProgram('fr')).commands.find((c) => c.name() === 'orders')?.commands.find((c) => c.name() === 'list');
  assert.ok(limit);
  assert.match(limit.helpInformation(), /--limit <n> +combien \(de 1 à 200\) \(par défaut : « 20 »\)/);
  assert.match(program.helpInformation(), /^Utilisation : cauri \[options\] \[commande\]/);
  assert.match(program.helpInformation(), /help \[commande\] +afficher l'aide d'une commande/);
  // A French line never starts with the colon, semicolon or closing quote that the space before it belongs to.
  for (const command of allCommands(program))
    assert.doesNotMatch(command.helpInformation(), /^\s*[:;?!»]/m, `cauri ${commandPath(command)} --help in French`);
  // English keeps commander's words.
  const listEn = english.commands.find((c) => c.name() === 'orders')?.commands.find((c) => c.name() === 'list');
  assert.match(listEn?.helpInformation() ?? '', /--limit <n> +how many \(1 to 200\) \(default: "20"\)/);
  assert.match(english.helpInformation(), /^Usage: cauri \[options\] \[command\]/);
});

test('one argument too many: the whole error in French, and the usage after it', async () => {
  const fr = await runCli(['clients', 'list', 'extra'], { LANG: 'fr_FR.UTF-8' });
  assert.equal(fr.code, 1);
  const first = fr.stderr.split('\n')[0];
  assert.equal(first, "erreur : trop d'arguments pour 'list' (attendus : 0, reçus : 1).");
  assert.match(fr.stderr, /Utilisation : cauri clients list \[options\]/);
  const en = await runCli(['clients', 'list', 'extra'], {});
  assert.equal(en.code, 1);
  assert.equal(en.stderr.split('\n')[0], "error: too many arguments for 'list'. Expected 0 arguments but got 1.");
});

test('a message that counts has a singular and a plural form, never a hand-made "(s)"', () => {
  for (const language of ['en', 'fr'] as const)
    for (const [key, text] of Object.entries(MESSAGES[language]))
      assert.doesNotMatch(text.replace(/http\(s\)/g, ''), /\w\(s\)/, `${language} ${key}: ${text}`);
  useCliLanguage('fr');
  assert.equal(sayCount({ one: 'orders.note.fills.one', other: 'orders.note.fills.other' }, 1), '1 exécution :');
  assert.equal(sayCount({ one: 'positions.breaks.one', other: 'positions.breaks.other' }, 2), '2 écarts');
  useCliLanguage('en');
  assert.equal(sayCount({ one: 'orders.note.fills.one', other: 'orders.note.fills.other' }, 5), '5 fills:');
});

test("an import file that is not JSON is refused in the run's language, naming where it breaks", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-cli-json-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'rates.json');
  writeFileSync(file, '[\n  { "date": nope }\n]');
  const env = { CAURI_DATA_DIR: dir };
  const fr = await runCli(['fx', 'import', file, '--lang', 'fr'], env);
  assert.equal(fr.code, 1);
  assert.match(fr.stderr, new RegExp(`^cauri: ${file} n'est pas un JSON valide à la ligne 2, colonne 13 : `));
  const en = await runCli(['fx', 'import', file], env);
  assert.equal(en.code, 1);
  assert.match(en.stderr, new RegExp(`^cauri: ${file} is not valid JSON at line 2, column 13: `));
});

test('every refusal of the command line comes from the catalogue of messages, none is a sentence written in place', () => {
  const dir = fileURLToPath(new URL('../../../src/cli/', import.meta.url));
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  const inPlace = files.flatMap((f) =>
    [...readFileSync(join(dir, f), 'utf8').matchAll(/new CliError\(\s*[`'"]/g)].map((m) => `${f}: ${m[0]}`),
  );
  assert.deepEqual(inPlace, []);
});
