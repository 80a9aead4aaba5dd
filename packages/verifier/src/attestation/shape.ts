import { isJsonObject, isNonEmptyString, unknownMember, type JsonObject } from '../internal/guards.js';
import { parseDateTime } from '../internal/time.js';
import type { Attestation } from './types.js';

const MEMBERS = new Set([
  'id',
  'version',
  'subject_id',
  'level',
  'issued_at',
  'expires_at',
  'issuer',
  'verifications',
  'jurisdictions',
  'signature',
  'key_id',
]);
const VERIFICATION_MEMBERS = new Set(['type', 'verified_at', 'method']);
const LEVELS = new Set(['KYC1', 'KYC2', 'KYC3']);
const TYPES = new Set(['id_doc', 'address', 'selfie', 'liveness', 'source_of_funds', 'pep']);
const JURISDICTIONS = new Set(['UEMOA', 'CEMAC', 'GHANA']);
// A subject id is 1 to 128 of [A-Za-z0-9._:-] (docs/concepts.md).
const SUBJECT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export type Parsed = { attestation: Attestation; issuedAt: number; expiresAt: number };

/**
 * Checks the attestation schema of version 1.0 and returns the times it carries, or
 * a message naming the first problem. Unknown members are refused: the object is
 * closed (docs/concepts.md: "no member is ever added to it"), and a verifier that
 * tolerated them would vouch for content no schema describes.
 */
export function parseAttestation(value: unknown): Parsed | string {
  if (!isJsonObject(value)) return 'attestation: expected a JSON object';
  const extra = unknownMember(value, MEMBERS);
  if (extra !== null) return `attestation: unknown member "${extra}"`;
  if (!isNonEmptyString(value['id'])) return 'id: expected a non-empty string';
  if (value['version'] !== '1.0') return 'version: expected "1.0"';
  if (typeof value['subject_id'] !== 'string' || !SUBJECT_ID.test(value['subject_id'])) {
    return 'subject_id: expected 1 to 128 characters of [A-Za-z0-9._:-]';
  }
  if (typeof value['level'] !== 'string' || !LEVELS.has(value['level'])) return 'level: expected KYC1, KYC2 or KYC3';
  // Attestation times are whole seconds, UTC (docs/concepts.md).
  const issuedAt = parseDateTime(value['issued_at'], true);
  if (issuedAt === null) return 'issued_at: expected a UTC date-time in whole seconds (YYYY-MM-DDTHH:MM:SSZ)';
  const expiresAt = parseDateTime(value['expires_at'], true);
  if (expiresAt === null) return 'expires_at: expected a UTC date-time in whole seconds (YYYY-MM-DDTHH:MM:SSZ)';
  if (expiresAt <= issuedAt) return 'expires_at: must be later than issued_at';
  if (!isNonEmptyString(value['issuer'])) return 'issuer: expected a non-empty string';
  const problem = verifications(value['verifications']) ?? jurisdictions(value);
  if (problem !== null) return problem;
  if (!isNonEmptyString(value['key_id'])) return 'key_id: expected a non-empty string';
  if (typeof value['signature'] !== 'string') return 'signature: expected a string';
  return { attestation: value as unknown as Attestation, issuedAt, expiresAt };
}

function verifications(list: unknown): string | null {
  if (!Array.isArray(list) || list.length === 0) return 'verifications: expected a non-empty array';
  const seen = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    const at = `verifications[${i}]`;
    if (!isJsonObject(item)) return `${at}: expected an object`;
    const extra = unknownMember(item, VERIFICATION_MEMBERS);
    if (extra !== null) return `${at}: unknown member "${extra}"`;
    if (typeof item['type'] !== 'string' || !TYPES.has(item['type'])) return `${at}.type: unknown verification type`;
    if (seen.has(item['type'])) return `${at}.type: "${item['type']}" is listed twice`;
    seen.add(item['type']);
    // Like every date-time of an attestation: the issuer stores the client's time in whole seconds.
    if (parseDateTime(item['verified_at'], true) === null) {
      return `${at}.verified_at: expected a UTC date-time in whole seconds (YYYY-MM-DDTHH:MM:SSZ)`;
    }
    if (item['method'] !== undefined && typeof item['method'] !== 'string') return `${at}.method: expected a string`;
  }
  return null;
}

function jurisdictions(value: JsonObject): string | null {
  const list = value['jurisdictions'];
  if (list === undefined) return null; // optional in the standalone attestation schema
  if (!Array.isArray(list) || list.length === 0) return 'jurisdictions: expected a non-empty array';
  const seen = new Set<unknown>();
  for (const item of list as unknown[]) {
    if (typeof item !== 'string' || !JURISDICTIONS.has(item)) return 'jurisdictions: items must be UEMOA, CEMAC or GHANA';
    if (seen.has(item)) return `jurisdictions: "${item}" is listed twice`;
    seen.add(item);
  }
  return null;
}
