import type { Command } from 'commander';
import { openDatabase } from '../../app.js';
import { loadConfig } from '../../config/config.js';
import { resolveMasterKey } from '../../config/master-key.js';
import { isoMillis } from '../../lib/clock.js';
import { deriveKey } from '../../lib/crypto.js';
import { findPartner, setPartnerFixCredentials } from '../../partners/partner.repository.js';
import { FixCredentialSealer } from '../../routing/fix/credentials.js';
import { listSessions } from '../../routing/fix/fix.repository.js';
import { CliError, printJson, printTable } from '../output.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `cauri partners credentials` and `cauri partners sessions`: the FIX partners' secrets and sessions. */
export function registerFixCommands(partners: Command): void {
  partners
    .command('credentials <partner-id>')
    .description("Store a FIX partner's logon Username (553) and Password (554), sealed with the master key")
    .requiredOption('--username <username>', 'Username (553) the SGI gave this service')
    .requiredOption('--password-stdin', 'read the Password (554) from standard input (one line)')
    .action(async (partnerId: string, options: { username: string; passwordStdin: boolean }) => {
      const password = (await readStdin()).replace(/\r?\n$/, '');
      if (password === '') throw new CliError('no password on standard input');
      if (/[\x00-\x1f]/.test(password) || /[\x00-\x1f]/.test(options.username)) throw new CliError('the username and password must be printable characters (no SOH)');
      const config = loadConfig();
      const sealer = new FixCredentialSealer(deriveKey(resolveMasterKey(config), 'fix-credentials'));
      const storage = await openDatabase(config);
      try {
        const partner = await findPartner(storage.db, partnerId);
        if (partner === undefined) throw new CliError(`no partner ${partnerId}`);
        await storage.transact((trx) => setPartnerFixCredentials(trx, partnerId, sealer.seal(partnerId, { username: options.username, password }), Date.now()));
        process.stdout.write(`FIX credentials of ${partnerId} stored; the session uses them from its next logon.\n`);
        if (partner.connector !== 'fix') process.stdout.write(`Note: ${partnerId} uses the ${partner.connector} connector, not fix.\n`);
      } finally {
        await storage.close();
      }
    });

  partners
    .command('sessions')
    .description("Show each FIX partner's session: state, sequence numbers, last messages, the process holding it")
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const storage = await openDatabase(loadConfig());
      try {
        const at = (ms: number | null) => (ms === null ? null : isoMillis(ms));
        const rows = (await listSessions(storage.db)).map((s) => ({
          partner_id: s.partner_id,
          state: s.state,
          sender_comp_id: s.sender_comp_id,
          target_comp_id: s.target_comp_id,
          next_sender_seq: s.next_sender_seq,
          next_target_seq: s.next_target_seq,
          last_logon_at: at(s.last_logon_at),
          last_sent_at: at(s.last_sent_at),
          last_received_at: at(s.last_received_at),
          held_by: s.lease_until > Date.now() ? s.lease_owner : null,
          last_error: s.last_error,
        }));
        if (options.json === true) printJson(rows);
        else printTable(rows, ['partner_id', 'state', 'sender_comp_id', 'target_comp_id', 'next_sender_seq', 'next_target_seq', 'last_received_at', 'held_by', 'last_error']);
      } finally {
        await storage.close();
      }
    });
}
