#!/usr/bin/env node
// cauri-verify: the command-line face of the package. The only module with I/O:
// it reads files or fetches http(s) URLs, then calls the pure verifiers.
// Exit status: 0 valid, 1 invalid, 2 usage error or input that could not be read.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { verifyAttestation } from './attestation/verify.js';
import { verifySnapshot } from './audit/verify-snapshot.js';
import { verifySnapshotProof } from './audit/verify-proof.js';
import { repeatedMemberName } from './internal/json-text.js';
import { parseInstant } from './internal/time.js';

const USAGE = `Usage:
  cauri-verify attestation <file> --keys <file|url> [--crl <file|url>] [--now <iso>] [--max-crl-age <s>] [--json]
  cauri-verify proof <file> --snapshot <file|url> --keys <file|url> [--attestation <file>] [--json]
  cauri-verify --help

attestation  verifies a KYC attestation offline against the issuer key document
             (/.well-known/cauri) and, with --crl, the revocation list (/v1/kyc/crl).
             Without --crl, revocation is not checked and the output says so.
             A list older than 24 hours decides nothing; --max-crl-age (0 to
             86400 seconds) tightens that limit.
proof        verifies an order's Merkle inclusion proof against a signed daily
             snapshot; --attestation also checks the attestation behind the order.

Exit status: 0 valid, 1 invalid, 2 usage error or unreadable input.`;

class UsageError extends Error {}

interface Verdict {
  valid: boolean;
  reason: string | null;
  message?: string;
  [detail: string]: unknown;
}

/** A JSON document as read, and the first member name it repeats (see repeatedMemberName). */
interface Loaded {
  value: unknown;
  repeated: string | null;
}

async function load(source: string, what: string): Promise<Loaded> {
  let text: string;
  try {
    if (/^https?:\/\//i.test(source)) {
      const response = await fetch(source, { headers: { accept: 'application/json' }, redirect: 'follow' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } else {
      text = await readFile(source, 'utf8');
    }
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${source}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${what} ${source} is not JSON`);
  }
  return { value, repeated: repeatedMemberName(text) };
}

/** The verdict on a document that repeats a member name: it has no RFC 8785 form, so nothing it says is vouched for. */
function repeated(loaded: Loaded | undefined, what: string, reason: string): Verdict | null {
  if (loaded?.repeated == null) return null;
  return {
    valid: false,
    reason,
    message: `${what}: member "${loaded.repeated}" appears twice in one object; a signed document is I-JSON (RFC 8785), whose names are unique`,
  };
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`missing ${flag}`);
  return value;
}

async function attestation(file: string, values: Record<string, string | boolean | undefined>): Promise<Verdict> {
  const keysSource = required(values['keys'] as string | undefined, '--keys');
  let now: Date | undefined;
  if (values['now'] !== undefined) {
    // RFC 3339 with its offset: `new Date` alone would read a time without one in the local zone,
    // so the same command would decide differently on two machines.
    const text = values['now'] as string;
    now = new Date(parseInstant(text) ?? NaN);
    if (Number.isNaN(now.getTime())) {
      throw new UsageError(`--now: expected an RFC 3339 date-time with Z or an offset (2026-04-01T12:00:00Z): ${text}`);
    }
  }
  let maxCrlAge: number | undefined;
  if (values['max-crl-age'] !== undefined) {
    // Decimal seconds only: Number() would read "" as 0 and "0x10" as 16.
    const text = values['max-crl-age'] as string;
    maxCrlAge = /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : NaN;
    if (!(maxCrlAge >= 0 && maxCrlAge <= 86_400)) throw new UsageError('--max-crl-age: expected seconds from 0 to 86400 (24 hours)');
  }
  const [att, keys, crl] = await Promise.all([
    load(file, 'attestation'),
    load(keysSource, 'key document'),
    values['crl'] === undefined ? undefined : load(values['crl'] as string, 'CRL'),
  ]);
  const refused =
    repeated(att, 'attestation', 'malformed') ?? repeated(keys, 'key document', 'malformed') ?? repeated(crl, 'CRL', 'crl_bad_signature');
  if (refused !== null) return refused;
  const options = {
    ...(crl === undefined ? {} : { crl: crl.value }),
    ...(now ? { now } : {}),
    ...(maxCrlAge === undefined ? {} : { maxCrlAge }),
  };
  const result = verifyAttestation(att.value, keys.value, options);
  if (!result.valid) return result;
  const a = result.attestation;
  return {
    valid: true,
    reason: null,
    id: a.id,
    subject_id: a.subject_id,
    level: a.level,
    issued_at: a.issued_at,
    expires_at: a.expires_at,
    key_id: a.key_id,
    revocation_checked: result.revocation_checked,
    crl_number: result.crl_number,
  };
}

async function proof(file: string, values: Record<string, string | boolean | undefined>): Promise<Verdict> {
  const snapshotSource = required(values['snapshot'] as string | undefined, '--snapshot');
  const keysSource = required(values['keys'] as string | undefined, '--keys');
  const [proofDoc, snapshot, keys, att] = await Promise.all([
    load(file, 'proof'),
    load(snapshotSource, 'snapshot'),
    load(keysSource, 'key document'),
    values['attestation'] === undefined ? undefined : load(values['attestation'] as string, 'attestation'),
  ]);
  const refused =
    repeated(snapshot, 'snapshot', 'snapshot_malformed') ??
    repeated(keys, 'key document', 'snapshot_malformed') ??
    repeated(proofDoc, 'proof', 'malformed') ??
    repeated(att, 'attestation', 'malformed');
  if (refused !== null) return refused;
  const signed = verifySnapshot(snapshot.value, keys.value);
  if (!signed.valid) return { valid: false, reason: `snapshot_${signed.reason}`, message: `snapshot: ${signed.message}` };
  const included = verifySnapshotProof(proofDoc.value, snapshot.value, att === undefined ? {} : { attestation: att.value });
  if (!included.valid) return included;
  return {
    valid: true,
    reason: null,
    date: signed.snapshot.date,
    merkle_root: signed.snapshot.merkle_root,
    count: signed.snapshot.count,
    key_id: signed.snapshot.key_id,
    order: included.leaf,
    attestation_checked: att !== undefined,
  };
}

function human(command: string, v: Verdict): string {
  if (!v.valid) return `INVALID ${command}: ${v.reason}\n  ${v.message ?? ''}`;
  if (command === 'attestation') {
    return [
      `VALID attestation ${String(v['id'])}`,
      `  subject ${String(v['subject_id'])}, level ${String(v['level'])}`,
      `  issued ${String(v['issued_at'])}, expires ${String(v['expires_at'])}, key ${String(v['key_id'])}`,
      v['revocation_checked'] ? `  not revoked (CRL #${String(v['crl_number'])})` : '  WARNING: revocation not checked (no --crl given)',
    ].join('\n');
  }
  return [
    `VALID proof: order ${String((v['order'] as { id: string }).id)} is in the snapshot of ${String(v['date'])}`,
    `  root ${String(v['merkle_root'])} over ${String(v['count'])} orders, signed with key ${String(v['key_id'])}`,
    `  order ${JSON.stringify(v['order'])}`,
    v['attestation_checked'] ? '  the attestation given is the one the order was accepted under' : '',
  ]
    .filter(Boolean)
    .join('\n');
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        keys: { type: 'string' },
        crl: { type: 'string' },
        now: { type: 'string' },
        'max-crl-age': { type: 'string' },
        snapshot: { type: 'string' },
        attestation: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, file, ...rest] = positionals;
  try {
    if ((command !== 'attestation' && command !== 'proof') || file === undefined || rest.length > 0) {
      throw new UsageError(
        command === undefined
          ? 'missing command'
          : `expected: ${command === 'attestation' || command === 'proof' ? command + ' <file>' : 'attestation or proof'}`,
      );
    }
    const verdict = command === 'attestation' ? await attestation(file, values) : await proof(file, values);
    process.stdout.write(values.json === true ? `${JSON.stringify(verdict, null, 2)}\n` : `${human(command, verdict)}\n`);
    return verdict.valid ? 0 : 1;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`cauri-verify: ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
