import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { localiseHelp, message, type CliLanguage } from './i18n.js';

/**
 * The `cauri` command (installed as cauri.cjs, which sizes the thread pool first and loads this
 * module; this file stays executable on its own for links made by earlier installs). It reads the
 * same configuration as the service (environment and .env), so `CAURI_DATA_DIR=x cauri partners list`
 * acts on the service that runs with `CAURI_DATA_DIR=x`.
 */
/** The installed package's version (package.json, two levels above dist/src/cli/). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

type Register = (program: Command) => void;

/**
 * The top-level commands, by the module that registers them, in the order help lists them. A run
 * loads the module of the command it names and no other (each pulls in what its commands need: the
 * database and its migrations, the HTTP client...); help and unknown commands load them all.
 */
export const COMMAND_MODULES: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
  { names: ['serve', 'worker'], load: async () => (await import('./commands/serve.js')).registerServe },
  { names: ['migrate'], load: async () => (await import('./commands/migrate.js')).registerMigrate },
  { names: ['partners', 'instruments', 'fx'], load: async () => (await import('./commands/directory.js')).registerDirectory },
  { names: ['accounts'], load: async () => (await import('./commands/accounts.js')).registerAccounts },
  { names: ['calendars', 'markets'], load: async () => (await import('./commands/markets.js')).registerMarkets },
  { names: ['fees'], load: async () => (await import('./commands/fees.js')).registerFees },
  { names: ['clients'], load: async () => (await import('./commands/clients.js')).registerClients },
  { names: ['keys'], load: async () => (await import('./commands/keys.js')).registerKeys },
  { names: ['audit'], load: async () => (await import('./commands/audit.js')).registerAudit },
  { names: ['login', 'trigger', 'listen', 'events'], load: async () => (await import('./commands/integrator.js')).registerIntegrator },
  { names: ['orders'], load: async () => (await import('./commands/orders.js')).registerOrders },
  { names: ['positions'], load: async () => (await import('./commands/positions.js')).registerPositions },
];

/**
 * The command tree, its help in `language`: the whole of it, or, given the run's arguments, only
 * the top-level command they name (the first argument that is one).
 */
export async function buildProgram(language: CliLanguage = 'en', argv?: readonly string[]): Promise<Command> {
  const program = new Command('cauri')
    .description('Brokerage order routing and portable KYC attestations')
    .version(packageVersion(), '-V, --version', message(language, 'help.version'))
    .showHelpAfterError()
    .exitOverride();
  const named = argv?.slice(2).find((arg) => COMMAND_MODULES.some((m) => m.names.includes(arg)));
  const versionOnly = named === undefined && argv !== undefined && argv.slice(2).some((arg) => arg === '-V' || arg === '--version');
  const modules = named === undefined ? (versionOnly ? [] : COMMAND_MODULES) : COMMAND_MODULES.filter((m) => m.names.includes(named));
  for (const register of await Promise.all(modules.map((m) => m.load()))) register(program);
  return localiseHelp(program, language);
}
