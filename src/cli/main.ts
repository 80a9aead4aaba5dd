#!/usr/bin/env node
import { CommanderError } from 'commander';
import { ConfigError } from '../config/config.js';
import { cliLanguageOf, cliText, environmentLanguage } from './i18n.js';
import { frenchConfigError } from './i18n/config.fr.js';
import { CliError } from './output.js';
import { buildProgram } from './program.js';

// A reader that stops early (`cauri calendars show BRVM | head -1`) closes the pipe: the command
// stops there quietly, as Unix tools do, instead of failing on its next write with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit();
});

async function main(argv: string[]): Promise<void> {
  let language = environmentLanguage(process.env);
  try {
    const run = cliLanguageOf(argv, process.env);
    language = run.language;
    await (await buildProgram(language, run.argv)).parseAsync(run.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    if (error instanceof ConfigError || error instanceof CliError) {
      const text =
        error instanceof CliError
          ? cliText(language, error)
          : language === 'fr'
            ? frenchConfigError(error.variable, error.message)
            : error.message;
      process.stderr.write(`cauri: ${text}\n`);
      process.exitCode = error instanceof CliError ? error.exitCode : 2;
      return;
    }
    throw error;
  }
}

await main(process.argv);
