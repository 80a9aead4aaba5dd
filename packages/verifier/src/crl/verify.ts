import { isCount, isJsonObject, isNonEmptyString, unknownMember } from '../internal/guards.js';
import { parseDateTime } from '../internal/time.js';
import { verifySigned, windowContaining } from '../keys/verify-signed.js';
import type { CrlEntry, CrlVerification } from './types.js';
import { issueVerifiedCrl } from './verified.js';

const MEMBERS = new Set([
  'version',
  'issuer',
  'crl_number',
  'issued_at',
  'next_update',
  'entries',
  'base_crl_number',
  'key_id',
  'signature',
]);
const ENTRY_MEMBERS = new Set(['attestation_id', 'revoked_at', 'reason']);
const REASONS = new Set(['superseded', 'compromised', 'subject_request', 'other']);

/**
 * Verifies a full or delta revocation list, signed exactly like an attestation
 * (docs/concepts.md): Ed25519 over the RFC 8785 form without `signature`, with the key
 * named by `key_id` whose window [valid_from, valid_until) contains `issued_at`.
 * Does not judge freshness: that depends on the relying party's clock and policy
 * (verifyAttestation's `maxCrlAge`). Never throws.
 */
export function verifyCrl(crl: unknown, keyDocument: unknown): CrlVerification {
  try {
    return run(crl, keyDocument);
  } catch (error) {
    // Only hostile objects (throwing getters, Proxies) get here.
    return malformed(`unreadable input: ${(error as Error).message}`);
  }
}

function run(crl: unknown, keyDocument: unknown): CrlVerification {
  if (!isJsonObject(crl)) return malformed('CRL: expected a JSON object');
  const extra = unknownMember(crl, MEMBERS);
  if (extra !== null) return malformed(`CRL: unknown member "${extra}"`);
  if (crl['version'] !== '1.0') return malformed('version: expected "1.0"');
  if (!isNonEmptyString(crl['issuer'])) return malformed('issuer: expected a non-empty string');
  if (!isCount(crl['crl_number'])) return malformed('crl_number: expected a non-negative integer');
  const base = crl['base_crl_number'];
  if (base !== undefined && (!isCount(base) || base > crl['crl_number'])) {
    return malformed('base_crl_number: expected a non-negative integer not above crl_number');
  }
  const issuedAt = parseDateTime(crl['issued_at'], true);
  if (issuedAt === null) return malformed('issued_at: expected a UTC date-time in whole seconds');
  const nextUpdate = parseDateTime(crl['next_update'], true);
  if (nextUpdate === null || nextUpdate < issuedAt)
    return malformed('next_update: expected a UTC date-time in whole seconds, not before issued_at');
  const entries = crl['entries'];
  if (!Array.isArray(entries)) return malformed('entries: expected an array');
  const seen = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    const entry: unknown = entries[i];
    if (!isJsonObject(entry) || unknownMember(entry, ENTRY_MEMBERS) !== null)
      return malformed(`entries[${i}]: expected { attestation_id, revoked_at, reason }`);
    const id = entry['attestation_id'];
    if (!isNonEmptyString(id)) return malformed(`entries[${i}].attestation_id: expected a non-empty string`);
    if (seen.has(id)) return malformed(`entries[${i}]: attestation "${id}" is listed twice`);
    seen.add(id);
    if (parseDateTime(entry['revoked_at'], true) === null)
      return malformed(`entries[${i}].revoked_at: expected a UTC date-time in whole seconds`);
    if (typeof entry['reason'] !== 'string' || !REASONS.has(entry['reason']))
      return malformed(`entries[${i}].reason: unknown revocation reason`);
  }
  if (!isNonEmptyString(crl['key_id'])) return malformed('key_id: expected a non-empty string');
  if (typeof crl['signature'] !== 'string') return malformed('signature: expected a string');

  const failure = verifySigned(
    crl as typeof crl & { key_id: string; signature: string },
    crl['issuer'],
    ['signature'],
    keyDocument,
    windowContaining(issuedAt, `CRL issued_at ${String(crl['issued_at'])}`),
  );
  if (failure !== null) return { valid: false, ...failure };
  return {
    valid: true,
    reason: null,
    crl: issueVerifiedCrl({
      issuer: crl['issuer'],
      crl_number: crl['crl_number'],
      base_crl_number: base === undefined ? null : (base as number),
      issued_at: crl['issued_at'] as string,
      next_update: crl['next_update'] as string,
      entries: entries as CrlEntry[],
      signed: true,
    }),
  };
}

function malformed(message: string): CrlVerification {
  return { valid: false, reason: 'malformed', message };
}
