#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/config.js';
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
import { CliError } from './output.js';

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

export function buildProgram(): Command {
  const program = new Command('cauri')
    .description('Brokerage order routing and portable KYC attestations')
    .version(packageVersion(), '-V, --version', 'print the version of cauri')
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
  return program;
}

async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    if (error instanceof ConfigError || error instanceof CliError) {
      process.stderr.write(`cauri: ${error.message}\n`);
      process.exitCode = error instanceof CliError ? error.exitCode : 2;
      return;
    }
    throw error;
  }
}

await main(process.argv);
