import type { Command } from 'commander';
import { openDatabase } from '../context.js';
import { listClientAccounts } from '../../accounts/account.repository.js';
import { toInvestorAccount } from '../../accounts/account.service.js';
import { loadConfig } from '../../config/config.js';
import { isId } from '../../lib/ids.js';
import { CliError, printJson, printTable } from '../output.js';

/**
 * `cauri accounts list`: for the operator answering a client (an order refused with rule `account`),
 * the account numbers a client registered for its subjects at the SGIs. Clients manage them through
 * the API; the command only reads.
 */
export function registerAccounts(program: Command): void {
  const accounts = program.command('accounts').description("Investors' account numbers at the SGIs, as the clients registered them");
  accounts
    .command('list')
    .description("List a client's registered accounts, by subject then partner")
    .requiredOption('--client <client_id>', 'the client (cli_...)')
    .option('--subject <subject_id>', 'only this subject')
    .option('--partner <partner_id>', 'only this partner (sgi_...)')
    .option('--json', 'print as JSON')
    .action(async (options: { client: string; subject?: string; partner?: string; json?: boolean }) => {
      if (!isId('client', options.client)) throw new CliError({ key: 'accounts.client', params: { value: options.client } });
      const storage = await openDatabase(loadConfig());
      try {
        const rows = await listClientAccounts(storage.db, options.client, {
          ...(options.subject === undefined ? {} : { subjectId: options.subject }),
          ...(options.partner === undefined ? {} : { partnerId: options.partner }),
        });
        const out = rows.map(toInvestorAccount);
        if (options.json === true) printJson(out);
        else printTable(out, ['subject_id', 'partner_id', 'account_number', 'updated_at']);
      } finally {
        await storage.close();
      }
    });
}
