import type { Command } from 'commander';
import { ensureDataDir, loadConfig } from '../../config/config.js';
import { applyShippedCalendars } from '../../markets/calendar.service.js';
import { applyShippedFees } from '../../partners/fee-schedule.service.js';
import { openStorage } from '../../storage/database.js';
import { migrateToLatest } from '../../storage/migrate.js';
import { join } from 'node:path';
import { say } from '../i18n.js';
import { printJson } from '../output.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description(
      'Apply pending database migrations, the shipped exchange calendars and fee schedules (the service also applies them at start)',
    )
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const config = loadConfig();
      if (config.databaseUrl === null) ensureDataDir(config.dataDir);
      const storage = await openStorage({
        databaseUrl: config.databaseUrl,
        sqlitePath: join(config.dataDir, 'cauri.sqlite'),
        poolSize: 1,
        sqliteSynchronous: config.sqliteSynchronous,
      }).catch(async (error: unknown) => {
        const { unreachableDatabase } = await import('../../services.js');
        throw config.databaseUrl === null ? error : (unreachableDatabase(config.databaseUrl, error) ?? error);
      });
      try {
        const report = await migrateToLatest(storage.db, storage.schema);
        const calendars = await applyShippedCalendars(storage.db, storage.dialect, new Date());
        const fees = await applyShippedFees(storage.db, storage.dialect, new Date());
        if (options.json === true) {
          printJson({ dialect: storage.dialect, applied: report.applied, calendars, fees });
        } else {
          process.stdout.write(
            `${report.applied.length === 0 ? say('migrate.upToDate') : say('migrate.applied', { migrations: report.applied.join(', ') })}\n`,
          );
          if (calendars.length > 0) process.stdout.write(`${say('migrate.calendars', { calendars: calendars.join(', ') })}\n`);
          if (fees.length > 0) process.stdout.write(`${say('migrate.fees', { fees: fees.join(', ') })}\n`);
        }
      } finally {
        await storage.close();
      }
    });
}
