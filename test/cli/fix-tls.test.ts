import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/app.js';
import { parseConfig } from '../../src/config/config.js';
import { deriveKey } from '../../src/lib/crypto.js';
import { FixCredentialSealer } from '../../src/routing/fix/credentials.js';
import { TestPki } from '../support/certificates.js';
import { runCli } from '../support/process.js';

test("partners tls stores a FIX partner's client certificate and key and its gateway's authorities, sealed, and refuses what would not work", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-fix-tls-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SEED: 'false' };
  const file = join(dir, 'partners.json');
  writeFileSync(
    file,
    JSON.stringify([
      {
        name: 'Tls Titres',
        jurisdiction: 'UEMOA',
        capabilities: ['equities'],
        connector: 'fix',
        fix: { host: 'fix.sgi.example', port: 9876, sender_comp_id: 'CAURI', target_comp_id: 'SGI1' },
      },
    ]),
  );
  const imported = await runCli(['partners', 'import', file, '--json'], env);
  assert.equal(imported.code, 0, imported.stderr);
  const id = (JSON.parse(imported.stdout) as { applied: { id: string }[] }).applied[0]?.id ?? '';

  const pki = new TestPki();
  const ca = pki.authority('Sgi Gateway CA');
  const clientCa = pki.authority('Sgi Client CA');
  const client = pki.leaf('client', 'CAURI', clientCa, { client: true });
  const other = pki.leaf('other', 'OTHER', clientCa, { client: true });

  const config = parseConfig(env);
  const sealer = new FixCredentialSealer(deriveKey(config.masterKey as Buffer, 'fix-credentials'));
  const stored = async () => {
    const storage = await openDatabase(config);
    try {
      return await storage.db.selectFrom('partners').select(['fix_tls', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
    } finally {
      await storage.close();
    }
  };

  // Refusals change nothing.
  const refusals: [string[], string | undefined, RegExp][] = [
    [['--cert', client.certPath, '--key', other.keyPath], undefined, /private key does not belong to the certificate CN=CAURI/],
    [['--ca', join(dir, 'missing.pem')], undefined, /ca: cannot read .*missing\.pem \(ENOENT\)/],
    [['--clear', '--ca', ca.certPath], undefined, /--clear takes no --cert, --key or --ca/],
  ];
  for (const [args, input, message] of refusals) {
    const result = await runCli(['partners', 'tls', id, ...args], env, input);
    assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
    assert.match(result.stderr, message);
  }
  assert.match((await runCli(['partners', 'tls', 'sgi_nobody', '--ca', ca.certPath], env)).stderr, /no partner sgi_nobody/);
  assert.equal((await stored()).fix_tls, null, 'nothing was stored');

  // The key from standard input, as a password is given.
  const set = await runCli(['partners', 'tls', id, '--cert', client.certPath, '--key', '-', '--ca', ca.certPath], env, client.key);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /client certificate: CN=CAURI \(issuer CN=Sgi Client CA\), valid to \d{4}-\d\d-\d\dT/);
  assert.match(set.stdout, /gateway's certificate authorities: CN=Sgi Gateway CA/);
  const row = await stored();
  assert.ok(
    row.fix_tls !== null && !row.fix_tls.includes('PRIVATE KEY') && !row.fix_tls.includes('CERTIFICATE'),
    'sealed, not in the clear',
  );
  assert.deepEqual(sealer.openTls(id, row.fix_tls), {
    client_cert: client.cert.trim() + '\n',
    client_key: client.key.trim() + '\n',
    ca: ca.cert.trim() + '\n',
  });
  assert.throws(() => sealer.openTls('sgi_other', row.fix_tls as string), 'sealed for this partner only');
  assert.throws(() => sealer.open(id, row.fix_tls as string), 'TLS material does not open as logon credentials');

  // A part given alone replaces that part and keeps the rest; the JSON shows certificates, never the key.
  const caOnly = await runCli(['partners', 'tls', id, '--ca', clientCa.certPath, '--json'], env);
  assert.equal(caOnly.code, 0, caOnly.stderr);
  const shown = JSON.parse(caOnly.stdout) as { client_cert: { subject: string; fingerprint_sha256: string }; ca: { subject: string }[] };
  assert.equal(shown.client_cert.subject, 'CN=CAURI');
  assert.match(shown.client_cert.fingerprint_sha256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  assert.deepEqual(
    shown.ca.map((c) => c.subject),
    ['CN=Sgi Client CA'],
  );
  assert.doesNotMatch(caOnly.stdout, /PRIVATE KEY/);
  const after = sealer.openTls(id, (await stored()).fix_tls as string);
  assert.equal(after.client_key, client.key.trim() + '\n');
  assert.equal(after.ca, clientCa.cert.trim() + '\n');

  const cleared = await runCli(['partners', 'tls', id, '--clear'], env);
  assert.equal(cleared.code, 0, cleared.stderr);
  assert.match(cleared.stdout, /client certificate: none\ngateway's certificate authorities: the public ones Node.js trusts/);
  assert.equal((await stored()).fix_tls, null);

  // A partner imported again keeps its TLS material, as it keeps its credentials.
  await runCli(['partners', 'tls', id, '--ca', ca.certPath], env);
  assert.equal((await runCli(['partners', 'import', file], env)).code, 0);
  assert.equal(sealer.openTls(id, (await stored()).fix_tls as string).ca, ca.cert.trim() + '\n');
});
