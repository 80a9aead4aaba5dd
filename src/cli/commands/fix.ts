import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { openDatabase } from '../context.js';
import { loadConfig } from '../../config/config.js';
import { resolveMasterKey } from '../../config/master-key.js';
import { deriveKey } from '../../lib/crypto.js';
import { findPartner, setPartnerFixCredentials, setPartnerFixTls } from '../../partners/partner.repository.js';
import { FixCredentialSealer } from '../../routing/fix/credentials.js';
import { sessionViews } from '../../routing/fix/session-view.js';
import { mergeTlsMaterial, summariseTlsMaterial, TlsMaterialError } from '../../routing/fix/tls-material.js';
import { say } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A PEM file named on the command line; `-` is standard input. */
async function readPem(path: string, what: string): Promise<string> {
  if (path === '-') return readStdin();
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError({
      key: 'fix.unreadable',
      params: { what, path, reason: (error as NodeJS.ErrnoException).code ?? String(error) },
    });
  }
}

/** `cauri partners credentials`, `cauri partners tls` and `cauri partners sessions`: the FIX partners' secrets and sessions. */
export function registerFixCommands(partners: Command): void {
  partners
    .command('credentials <partner-id>')
    .description("Store a FIX partner's logon Username (553) and Password (554), sealed with the master key")
    .requiredOption('--username <username>', 'Username (553) the SGI gave this service')
    .requiredOption('--password-stdin', 'read the Password (554) from standard input (one line)')
    .action(async (partnerId: string, options: { username: string; passwordStdin: boolean }) => {
      const password = (await readStdin()).replace(/\r?\n$/, '');
      if (password === '') throw new CliError({ key: 'fix.password.none' });
      if (/[\x00-\x1f]/.test(password) || /[\x00-\x1f]/.test(options.username)) throw new CliError({ key: 'fix.printable' });
      const config = loadConfig();
      const sealer = new FixCredentialSealer(deriveKey(resolveMasterKey(config), 'fix-credentials'));
      const storage = await openDatabase(config);
      try {
        const partner = await findPartner(storage.db, partnerId);
        if (partner === undefined) throw new CliError({ key: 'partners.none', params: { id: partnerId } });
        await storage.transact((trx) =>
          setPartnerFixCredentials(trx, partnerId, sealer.seal(partnerId, { username: options.username, password }), Date.now()),
        );
        process.stdout.write(`${say('fix.credentials.stored', { id: partnerId })}\n`);
        if (partner.connector !== 'fix') process.stdout.write(`${say('fix.connector', { id: partnerId, connector: partner.connector })}\n`);
      } finally {
        await storage.close();
      }
    });

  partners
    .command('tls <partner-id>')
    .description(
      "Store a FIX partner's TLS client certificate and key, and the CAs of its gateway's certificate, sealed with the master key",
    )
    .option('--cert <file>', 'PEM client certificate (its chain may follow it), with --key')
    .option('--key <file>', 'PEM private key of the client certificate, unencrypted; - reads it from standard input')
    .option('--ca <file>', "PEM certificates of the authorities the gateway's certificate chains to, in place of the public ones")
    .option('--clear', 'remove the stored TLS material: no client certificate, public authorities')
    .option('--json', 'print what is stored (certificates only, never the key) as JSON')
    .action(async (partnerId: string, options: { cert?: string; key?: string; ca?: string; clear?: boolean; json?: boolean }) => {
      const given = options.cert !== undefined || options.key !== undefined || options.ca !== undefined;
      if (options.clear === true && given) throw new CliError({ key: 'fix.tls.clear' });
      const input = {
        ...(options.cert === undefined ? {} : { cert: await readPem(options.cert, 'cert') }),
        ...(options.key === undefined ? {} : { key: await readPem(options.key, 'key') }),
        ...(options.ca === undefined ? {} : { ca: await readPem(options.ca, 'ca') }),
      };
      const config = loadConfig();
      const sealer = new FixCredentialSealer(deriveKey(resolveMasterKey(config), 'fix-credentials'));
      const storage = await openDatabase(config);
      try {
        const partner = await findPartner(storage.db, partnerId);
        if (partner === undefined) throw new CliError({ key: 'partners.none', params: { id: partnerId } });
        const current = partner.fix_tls === null ? null : sealer.openTls(partnerId, partner.fix_tls);
        let material = current;
        if (options.clear === true) material = null;
        else if (given) {
          try {
            material = mergeTlsMaterial(current, input, Date.now());
          } catch (error) {
            if (error instanceof TlsMaterialError) throw new CliError(error.message);
            throw error;
          }
        }
        if (material !== current)
          await storage.transact((trx) =>
            setPartnerFixTls(trx, partnerId, material === null ? null : sealer.sealTls(partnerId, material), Date.now()),
          );
        const stored = summariseTlsMaterial(material);
        if (options.json === true) {
          printJson({ partner_id: partnerId, ...stored });
          return;
        }
        const done = options.clear === true ? 'fix.tls.removed' : given ? 'fix.tls.stored' : 'fix.tls.unchanged';
        process.stdout.write(`${say(done, { id: partnerId })}\n`);
        const cert = stored.client_cert;
        process.stdout.write(
          `${
            cert === null
              ? say('fix.tls.cert.none')
              : say('fix.tls.cert', {
                  subject: cert.subject,
                  issuer: cert.issuer,
                  validTo: cert.valid_to,
                  fingerprint: cert.fingerprint_sha256,
                })
          }\n`,
        );
        process.stdout.write(
          `${
            stored.ca === null
              ? say('fix.tls.ca.public')
              : say('fix.tls.ca', {
                  authorities: stored.ca.map((c) => say('fix.tls.ca.entry', { subject: c.subject, validTo: c.valid_to })).join('; '),
                })
          }\n`,
        );
        if (partner.connector !== 'fix') process.stdout.write(`${say('fix.connector', { id: partnerId, connector: partner.connector })}\n`);
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
        const rows = await sessionViews(storage.db, Date.now());
        if (options.json === true) printJson(rows);
        else
          printTable(rows, [
            'partner_id',
            'state',
            'sender_comp_id',
            'target_comp_id',
            'next_sender_seq',
            'next_target_seq',
            'last_received_at',
            'held_by',
            'last_error',
          ]);
      } finally {
        await storage.close();
      }
    });
}
