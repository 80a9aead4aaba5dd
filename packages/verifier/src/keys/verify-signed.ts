import { canonicalizeBytes } from '../jcs/canonicalize.js';
import { verifyEd25519 } from '../ed25519/verify.js';
import { decodeBase64url } from '../internal/encoding.js';
import { isJsonObject, isNonEmptyString, without, type JsonObject } from '../internal/guards.js';
import { parseDateTime } from '../internal/time.js';
import type { SignedDocumentReason } from './types.js';

export type SignedFailure = { reason: SignedDocumentReason; message: string };

/**
 * Which instants a key's window [valid_from, valid_until) must cover for the
 * document to count as signed in it. Attestations and CRLs name their issue instant;
 * a snapshot only names its day, so it passes its own predicate.
 */
export type WindowRule = { accepts(from: number, until: number): boolean; describe: string };

export function windowContaining(instant: number, label: string): WindowRule {
  return { accepts: (from, until) => from <= instant && instant < until, describe: label };
}

/**
 * The verification every signed cauri document shares (docs/concepts.md#offline-verification):
 * the key named by `key_id` in the issuer's key document,
 * its window, then Ed25519 (RFC 8032) over the UTF-8 RFC 8785 form of the document
 * without `omit`. The caller has checked the document's own shape, including that
 * `key_id` and `signature` are strings. `issuer` is the document's `issuer` member,
 * or null for a document that has none (a snapshot: only its issuer's key can sign
 * it, which the key lookup already establishes). Returns null when it verifies.
 */
export function verifySigned(
  document: JsonObject & { key_id: string; signature: string },
  issuer: string | null,
  omit: readonly string[],
  keyDocument: unknown,
  window: WindowRule,
): SignedFailure | null {
  if (!isJsonObject(keyDocument) || !isNonEmptyString(keyDocument['issuer']) || !Array.isArray(keyDocument['keys'])) {
    return { reason: 'malformed', message: 'key document: expected an object with issuer and keys' };
  }
  // A document naming another issuer cannot be vouched for by this key document,
  // whatever its keys: none of them is that issuer's key.
  if (issuer !== null && issuer !== keyDocument['issuer']) {
    return {
      reason: 'unknown_key',
      message: `issuer "${issuer}" is not the key document's issuer "${keyDocument['issuer']}"`,
    };
  }
  const matches = (keyDocument['keys'] as unknown[]).filter((k) => isJsonObject(k) && k['key_id'] === document.key_id);
  if (matches.length !== 1) {
    return {
      reason: 'unknown_key',
      message: matches.length === 0 ? `no key "${document.key_id}" in the key document` : `key "${document.key_id}" is listed twice`,
    };
  }
  const key = matches[0] as JsonObject;
  // Algorithms are pinned: only Ed25519 keys are ever used (never chosen by the document).
  if (key['algorithm'] !== 'Ed25519' || typeof key['public_key'] !== 'string') {
    return { reason: 'unknown_key', message: `key "${document.key_id}" is not a usable Ed25519 key` };
  }
  const from = parseDateTime(key['valid_from'], false);
  const until = key['valid_until'] === null || key['valid_until'] === undefined ? Infinity : parseDateTime(key['valid_until'], false);
  if (from === null || until === null) {
    return { reason: 'unknown_key', message: `key "${document.key_id}" has a malformed validity window` };
  }
  if (!window.accepts(from, until)) {
    return {
      reason: 'key_not_valid_at_issue',
      message: `${window.describe} lies outside the window of key "${document.key_id}" [${String(key['valid_from'])}, ${String(key['valid_until'] ?? '')})`,
    };
  }
  const signature = decodeBase64url(document.signature, 64);
  if (signature === null) return { reason: 'bad_signature', message: 'signature is not 64 bytes of unpadded base64url' };
  let signed: Uint8Array;
  try {
    signed = canonicalizeBytes(without(document, omit));
  } catch (error) {
    return { reason: 'malformed', message: `no RFC 8785 form: ${(error as Error).message}` };
  }
  if (!verifyEd25519(key['public_key'], signed, signature)) {
    return { reason: 'bad_signature', message: `Ed25519 signature does not verify under key "${document.key_id}"` };
  }
  return null;
}
