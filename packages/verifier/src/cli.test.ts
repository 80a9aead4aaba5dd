import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyDocument, makeKey, signDocument } from './testing/issuer.js';
import { encodeAuditLeaf, auditLeafHash, attestationDigest } from './audit/leaf.js';
import { inclusionProof, rootFromLeafHashes } from './merkle/tree.js';

const cli = fileURLToPath(new URL('./cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cauri-verify-'));
const k1 = makeKey('k1', '2026-01-01T00:00:00Z', null);
const doc = keyDocument([k1]);
const att = signDocument(
  {
    id: 'att_1',
    version: '1.0',
    subject_id: 's',
    level: 'KYC1',
    issued_at: '2026-03-01T00:00:00Z',
    expires_at: '2027-03-01T00:00:00Z',
    issuer: 'cauri',
    verifications: [
      { type: 'id_doc', verified_at: '2026-03-01T00:00:00Z' },
      { type: 'selfie', verified_at: '2026-03-01T00:00:00Z' },
    ],
  },
  k1,
);
const crl = signDocument(
  {
    version: '1.0',
    issuer: 'cauri',
    crl_number: 1,
    issued_at: '2026-04-01T00:00:00Z',
    next_update: '2026-04-01T00:15:00Z',
    entries: [{ attestation_id: 'att_1', revoked_at: '2026-03-31T00:00:00Z', reason: 'compromised' }],
  },
  k1,
);
const leaves = [0, 1, 2].map((i) => ({
  id: `ord_${i}`,
  rcpt_to: 'sgi_1',
  kyc_attestation_id: 'att_1',
  kyc_attestation_sha256: attestationDigest(att),
  instrument: 'SNTS.BRVM',
  side: 'buy' as const,
  qty: 1,
  limit_price_cents: null,
  created_at: '2026-03-02T00:00:00.000Z',
}));
const hashes = leaves.map(auditLeafHash);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const root = hex(rootFromLeafHashes(hashes));
const snapshot = signDocument({ date: '2026-03-02', merkle_root: root, count: 3, previous_merkle_root: null }, k1);
const proof = {
  date: '2026-03-02',
  order_id: 'ord_2',
  leaf_index: 2,
  tree_size: 3,
  leaf: encodeAuditLeaf(leaves[2]!),
  leaf_hash: hex(hashes[2]!),
  audit_path: inclusionProof(hashes, 2).map(hex),
  merkle_root: root,
};
const files: Record<string, unknown> = { att, doc, crl, snapshot, proof, bad: { ...att, level: 'KYC2' } };
for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, `${name}.json`), JSON.stringify(value));
writeFileSync(join(dir, 'text.json'), 'not json');
const f = (name: string) => join(dir, `${name}.json`);

function run(...args: string[] | [Record<string, string>, string[]]): Promise<{ code: number; stdout: string; stderr: string }> {
  const [env, argv] = typeof args[0] === 'object' ? [args[0], args[1] as string[]] : [{}, args as string[]];
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...argv], { env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

after(() => rmSync(dir, { recursive: true, force: true }));

test('cli: exit codes and output', async () => {
  const now = ['--now', '2026-04-01T12:00:00Z'];
  let r = await run('attestation', f('att'), '--keys', f('doc'), ...now);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /VALID attestation att_1/);
  assert.match(r.stdout, /revocation not checked/);

  r = await run('attestation', f('att'), '--keys', f('doc'), '--crl', f('crl'), ...now, '--json');
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.stdout).reason, 'revoked');

  r = await run('attestation', f('att'), '--keys', f('doc'), '--crl', f('crl'), '--now', '2026-04-03T00:00:00Z', '--json');
  assert.equal(JSON.parse(r.stdout).reason, 'crl_stale');
  // --max-crl-age can tighten the 24-hour limit, never loosen it: a list 2 days old decides nothing.
  r = await run('attestation', f('att'), '--keys', f('doc'), '--crl', f('crl'), '--now', '2026-04-03T00:00:00Z', '--max-crl-age', '259200');
  assert.equal(r.code, 2, r.stdout);
  assert.match(r.stderr, /--max-crl-age: expected seconds from 0 to 86400/);

  r = await run('attestation', f('bad'), '--keys', f('doc'), ...now);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /INVALID attestation: bad_signature/);

  r = await run('proof', f('proof'), '--snapshot', f('snapshot'), '--keys', f('doc'), '--attestation', f('att'), '--json');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(JSON.parse(r.stdout).order.id, 'ord_2');

  r = await run('proof', f('proof'), '--snapshot', f('proof'), '--keys', f('doc'));
  assert.equal(r.code, 1);
  assert.match(r.stdout, /snapshot_malformed/);

  for (const args of [
    [],
    ['attestation'],
    ['attestation', f('att')],
    ['verify', f('att')],
    ['attestation', f('att'), '--keys', f('doc'), '--bogus'],
    ['attestation', f('att'), '--keys', f('missing')],
    ['attestation', f('text'), '--keys', f('doc')],
    ['attestation', f('att'), '--keys', f('doc'), '--now', 'soon'],
    ['proof', f('proof'), '--keys', f('doc')],
  ]) {
    r = await run(...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /Usage/);
  }
  r = await run('--help');
  assert.equal(r.code, 0);
  assert.match(r.stdout, /cauri-verify attestation/);
});

test('cli: --now is an RFC 3339 instant with its offset and --max-crl-age decimal seconds; anything else is a usage error', async () => {
  const check = ['attestation', f('att'), '--keys', f('doc')];
  const checkCrl = [...check, '--crl', f('crl'), '--now', '2026-04-01T00:00:10Z'];
  // Read in the local zone, "2027-02-28T23:00:00" was before expiry in Tokyo and after it in New York.
  const zoned = ['Asia/Tokyo', 'America/New_York'].map((tz) => run({ TZ: tz }, [...check, '--now', '2027-02-28T23:00:00']));
  const nows = ['Apr 1 2026', '2026-02-30T00:00:00Z', '2026-04-01'].map((value) => run(...check, '--now', value));
  const ages = ['', ' 60', '0x10', '1e3', 'Infinity'].map((value) => run(...checkCrl, '--max-crl-age', value));
  const [before, at, fraction] = await Promise.all([
    run(...check, '--now', '2027-03-01T08:59:59+09:00', '--json'),
    run(...check, '--now', '2027-03-01T09:00:00+09:00', '--json'),
    run(...checkCrl, '--max-crl-age', '5.5', '--json'),
  ]);
  for (const r of [...(await Promise.all(zoned)), ...(await Promise.all(nows))]) {
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /--now: expected an RFC 3339 date-time/);
  }
  for (const r of await Promise.all(ages)) {
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /--max-crl-age: expected seconds/);
  }
  assert.equal(before!.code, 0, before!.stdout + before!.stderr);
  assert.equal(JSON.parse(at!.stdout).reason, 'expired');
  assert.equal(JSON.parse(fraction!.stdout).reason, 'crl_stale');
});

test('cli: a document that repeats a member name is refused, whichever copy a reader would take', async () => {
  const now = ['--now', '2026-04-01T12:00:00Z'];
  const text = (value: unknown) => JSON.stringify(value);
  // JSON.parse keeps the last "level" (the signed KYC1), a first-wins reader sees KYC3.
  writeFileSync(f('att-twice'), text(att).replace('{', '{"level":"KYC3",'));
  // The same name written two ways is still one name.
  writeFileSync(f('att-escaped'), text(att).replace('"level"', '"\\u006cevel":"KYC1","level"'));
  writeFileSync(f('doc-twice'), text(doc).replace('"keys":', '"keys":[],"keys":'));
  writeFileSync(f('crl-twice'), text(crl).replace('"entries":', '"entries":[],"entries":'));
  writeFileSync(f('proof-twice'), text(proof).replace('"leaf_index"', '"leaf_index":0,"leaf_index"'));
  writeFileSync(f('snapshot-twice'), text(snapshot).replace('"count"', '"count":4,"count"'));
  const cases: [string[], string][] = [
    [['attestation', f('att-twice'), '--keys', f('doc'), ...now], 'malformed'],
    [['attestation', f('att-escaped'), '--keys', f('doc'), ...now], 'malformed'],
    [['attestation', f('att'), '--keys', f('doc-twice'), ...now], 'malformed'],
    [['attestation', f('att'), '--keys', f('doc'), '--crl', f('crl-twice'), ...now], 'crl_bad_signature'],
    [['proof', f('proof-twice'), '--snapshot', f('snapshot'), '--keys', f('doc')], 'malformed'],
    [['proof', f('proof'), '--snapshot', f('snapshot-twice'), '--keys', f('doc')], 'snapshot_malformed'],
  ];
  const results = await Promise.all(cases.map(([args]) => run(...args, '--json')));
  for (const [i, [args, reason]] of cases.entries()) {
    const r = results[i]!;
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).reason, reason, args.join(' '));
    assert.match(JSON.parse(r.stdout).message, /appears twice/);
  }
  // Repeated names in different objects are no repetition.
  writeFileSync(f('att-nested'), text(att));
  const r = await run('attestation', f('att-nested'), '--keys', f('doc'), ...now);
  assert.equal(r.code, 0, r.stdout + r.stderr);
});

test('cli: fetches the key document and CRL over http', async (t) => {
  const server = createServer((req, res) => {
    const body = req.url === '/.well-known/cauri' ? doc : req.url === '/v1/kyc/crl' ? crl : null;
    res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let r = await run(
    'attestation',
    f('att'),
    '--keys',
    `${base}/.well-known/cauri`,
    '--crl',
    `${base}/v1/kyc/crl`,
    '--now',
    '2026-04-01T12:00:00Z',
    '--json',
  );
  assert.equal(r.code, 1, r.stderr);
  assert.equal(JSON.parse(r.stdout).reason, 'revoked');
  r = await run('attestation', f('att'), '--keys', `${base}/nowhere`);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /HTTP 404/);
});
