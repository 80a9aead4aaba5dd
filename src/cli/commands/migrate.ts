import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { openStorage } from '../../storage/database.js';
import { migrateToLatest } from '../../storage/migrate.js';
import { join } from 'node:path';
import { printJson } from '../output.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Apply pending database migrations (the service also applies them at start)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const config = loadConfig();
      const storage = await openStorage({
        databaseUrl: config.databaseUrl,
        sqlitePath: join(config.dataDir, 'cauri.sqlite'),
        poolSize: 1,
        sqliteSynchronous: config.sqliteSynchronous,
      });
      try {
        const report = await migrateToLatest(storage.db, storage.schema);
        if (options.json === true) printJson({ dialect: storage.dialect, applied: report.applied });
        else process.stdout.write(report.applied.length === 0 ? 'Database is up to date.\n' : `Applied: ${report.applied.join(', ')}\n`);
      } finally {
        await storage.close();
      }
    });
}
