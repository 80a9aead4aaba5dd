import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAccounts } from './commands/accounts.js';
import { registerAudit } from './commands/audit.js';
import { registerClients } from './commands/clients.js';
import { registerDirectory } from './commands/directory.js';
import { registerFees } from './commands/fees.js';
import { registerIntegrator } from './commands/integrator.js';
import { registerKeys } from './commands/keys.js';
import { registerMarkets } from './commands/markets.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOrders } from './commands/orders.js';
import { registerPositions } from './commands/positions.js';
import { registerServe } from './commands/serve.js';
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

/** The whole command tree, its help in `language`. */
export function buildProgram(language: CliLanguage = 'en'): Command {
  const program = new Command('cauri')
    .description('Brokerage order routing and portable KYC attestations')
    .version(packageVersion(), '-V, --version', message(language, 'help.version'))
    .showHelpAfterError()
    .exitOverride();
  registerServe(program);
  registerMigrate(program);
  registerDirectory(program);
  registerAccounts(program);
  registerMarkets(program);
  registerFees(program);
  registerClients(program);
  registerKeys(program);
  registerAudit(program);
  registerIntegrator(program);
  registerOrders(program);
  registerPositions(program);
  return localiseHelp(program, language);
}
