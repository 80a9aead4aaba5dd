import type { Command } from 'commander';
import { KeyRing } from '../../keys/key-ring.js';
import { isoSeconds } from '../../lib/clock.js';
import type { KeyPurpose } from '../../keys/signing-key.table.js';
import { withDeployment } from '../context.js';
import { say } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';

function purposeOf(value: string): KeyPurpose {
  if (value !== 'attestation' && value !== 'token') throw new CliError({ key: 'keys.purpose', params: { value } });
  return value;
}

export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .description('Manage Ed25519 signing keys (attestations, revocation lists, snapshots; access tokens)');

  keys
    .command('list')
    .description('List signing keys with their validity windows')
    .option('--purpose <purpose>', 'attestation or token', 'attestation')
    .option('--json', 'print as JSON')
    .action(async (options: { purpose: string; json?: boolean }) => {
      const purpose = purposeOf(options.purpose);
      const list = await withDeployment(({ services }) => services.keys.all(purpose));
      const rows = list.map((k) => ({
        key_id: k.id,
        purpose: k.purpose,
        public_key: k.publicKey,
        valid_from: isoSeconds(k.validFrom),
        // Whole seconds, and the current key's window ending at its planned end: as the key document publishes them.
        valid_until: isoSeconds(KeyRing.windowEnd(k)),
        current: k.validUntil === null,
      }));
      if (options.json === true) printJson(rows);
      else printTable(rows, ['key_id', 'purpose', 'current', 'valid_from', 'valid_until', 'public_key']);
    });

  keys
    .command('rotate')
    .description('Close the current key window and open the next at the same instant; past keys stay published')
    .option('--purpose <purpose>', 'attestation or token', 'attestation')
    .option('--json', 'print as JSON')
    .action(async (options: { purpose: string; json?: boolean }) => {
      const purpose = purposeOf(options.purpose);
      const { previous, current } = await withDeployment(({ services }) => services.keys.rotate(purpose));
      const out = {
        purpose,
        previous_key_id: previous?.id ?? null,
        key_id: current.id,
        valid_from: isoSeconds(current.validFrom),
      };
      if (options.json === true) printJson(out);
      else {
        const params = { purpose, previous: out.previous_key_id ?? '', key: out.key_id, at: out.valid_from };
        process.stdout.write(`${say(out.previous_key_id === null ? 'keys.rotated.first' : 'keys.rotated', params)}\n`);
      }
    });
}
