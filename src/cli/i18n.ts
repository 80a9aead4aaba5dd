import { type Command, Help } from 'commander';
import { FR_COMMANDER_ERRORS, FR_HELP, FR_HELP_TITLES, frenchHelpExtras } from './i18n/help.fr.js';
import { MESSAGES, type MessageKey } from './i18n/messages.js';
import { CliError, fill } from './output.js';

/**
 * The command line's languages. The language is `--lang en|fr` when given (anywhere on the line),
 * else the locale of the environment as POSIX orders it (`LC_ALL`, then `LC_MESSAGES`, then `LANG`:
 * `fr_FR.UTF-8`, `fr_CI`, `fr` are French), else English. Help texts are English in the commands'
 * own definitions and French in i18n/help.fr.ts, keyed by the command's path; messages are in
 * i18n/messages.ts, one key per message in both languages. JSON output (`--json`) is the same in
 * every language. See docs/cli.md.
 */
export const CLI_LANGUAGES = ['en', 'fr'] as const;
export type CliLanguage = (typeof CLI_LANGUAGES)[number];

function fromLocale(value: string | undefined): CliLanguage | null {
  if (value === undefined || value === '') return null;
  return /^fr([_.@-]|$)/i.test(value) ? 'fr' : 'en';
}

/**
 * The language of this run, and the arguments without `--lang` (which may stand after a
 * subcommand, where the subcommand would not know it). A value other than `en` or `fr` is a usage
 * error (exit 2).
 */
export function cliLanguageOf(argv: readonly string[], env: NodeJS.ProcessEnv): { language: CliLanguage; argv: string[] } {
  const rest: string[] = [];
  let named: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === '--lang') {
      named = argv[i + 1] ?? '';
      i++;
    } else if (arg.startsWith('--lang=')) named = arg.slice('--lang='.length);
    else rest.push(arg);
  }
  const environment = environmentLanguage(env);
  if (named !== undefined && !(CLI_LANGUAGES as readonly string[]).includes(named)) {
    throw new CliError({ key: 'lang.invalid', params: { value: named } }, 2);
  }
  return { language: (named as CliLanguage | undefined) ?? environment, argv: rest };
}

/** The language of this run's printed messages, set once by buildProgram. */
let current: CliLanguage = 'en';

export function useCliLanguage(language: CliLanguage): void {
  current = language;
}

/** The language of this run's printed messages, for what `Intl` formats (days of the week). */
export function cliLanguage(): CliLanguage {
  return current;
}

/** A message of the catalogue in the run's language, for what a command prints. */
export function say(key: MessageKey, params: Record<string, string | number> = {}): string {
  return message(current, key, params);
}

/** The language the environment's locale asks for, before `--lang` is read. */
export function environmentLanguage(env: NodeJS.ProcessEnv): CliLanguage {
  return fromLocale(env.LC_ALL) ?? fromLocale(env.LC_MESSAGES) ?? fromLocale(env.LANG) ?? 'en';
}

/** A message of the catalogue in `language`, its `{name}` placeholders filled. */
export function message(language: CliLanguage, key: MessageKey, params: Record<string, string | number> = {}): string {
  return fill(MESSAGES[language][key], params, language);
}

/** What a CliError says in `language`: its catalogue message when it has one, else its text. */
export function cliText(language: CliLanguage, error: CliError): string {
  return error.text === undefined ? error.message : message(language, error.text.key as MessageKey, error.text.params ?? {});
}

/** The path of a command in the tree: `orders list`, `` for the program itself. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Every command of the tree, the program first. */
export function allCommands(program: Command): Command[] {
  return [program, ...program.commands.flatMap((c) => allCommands(c))];
}

/** The help keys of a command: its description, each argument's and each option's (by its long flag). */
export function helpKeys(command: Command): { key: string; english: string; set: (text: string) => void }[] {
  const path = commandPath(command);
  const keys: { key: string; english: string; set: (text: string) => void }[] = [];
  keys.push({ key: path, english: command.description(), set: (text) => command.description(text) });
  for (const arg of command.registeredArguments) {
    if (arg.description !== '')
      keys.push({ key: `${path} <${arg.name()}>`, english: arg.description, set: (text) => (arg.description = text) });
  }
  for (const option of command.options) {
    keys.push({ key: `${path} ${option.long ?? option.flags}`, english: option.description, set: (text) => (option.description = text) });
  }
  return keys;
}

/** A stand-in for a space that must not break a line (a private-use character, never in a help text). */
const NO_BREAK = '\ue000';

/**
 * Gives the whole tree its help in `language`: every description of command, argument and option,
 * commander's own titles and its help option and command. English is what the commands define.
 */
export function localiseHelp(program: Command, language: CliLanguage): Command {
  useCliLanguage(language);
  program.option('--lang <language>', message(language, 'help.lang'));
  for (const command of allCommands(program)) {
    command.helpOption('-h, --help', message(language, 'help.help'));
    if (command.commands.length > 0) command.helpCommand(message(language, 'help.helpCommandTerm'), message(language, 'help.helpCommand'));
    if (language === 'en') continue;
    command.configureOutput({
      // Commander's own errors (an unknown option, a missing argument), in French.
      outputError: (text, write) =>
        write(FR_COMMANDER_ERRORS.reduce((out, [pattern, french]) => out.replace(pattern, french as (m: string) => string), text)),
    });
    for (const { key, set } of helpKeys(command)) {
      const text = FR_HELP[key];
      if (text !== undefined) set(text);
    }
    // Commander's own words in a help page: `(default: "20")` after a description, `[command]` in
    // the usage line.
    const english = new Help();
    command.configureHelp({
      styleTitle: (title: string) => FR_HELP_TITLES[title] ?? title,
      optionDescription: (option) => frenchHelpExtras(english.optionDescription(option), option.description),
      argumentDescription: (argument) => frenchHelpExtras(english.argumentDescription(argument), argument.description),
      commandUsage: (cmd) => english.commandUsage(cmd).replace(/\[command\]$/, '[commande]'),
      // The space before a French colon, semicolon or closing quote (and after an opening one) does
      // not break a line: held by a stand-in while commander wraps, a space again after.
      boxWrap: (text, width) =>
        english.boxWrap(text.replace(/ (?=[:;?!»])|(?<=«) /g, NO_BREAK), width).replace(new RegExp(NO_BREAK, 'g'), ' '),
    } satisfies Partial<Help>);
  }
  return program;
}

/**
 * A message that counts something, in the run's language: `keys.one` or `keys.other` as the
 * language's plural rules (Intl.PluralRules) select for `count`, which fills `{count}`.
 */
export function sayCount(
  keys: { one: MessageKey; other: MessageKey },
  count: number,
  params: Record<string, string | number> = {},
): string {
  const form = new Intl.PluralRules(current).select(count) === 'one' ? keys.one : keys.other;
  return say(form, { ...params, count });
}

/** A number of seconds with one decimal, as the run's language writes it (`1.5`, `1,5`). */
export function saySeconds(ms: number): string {
  return new Intl.NumberFormat(current, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(ms / 1000);
}
