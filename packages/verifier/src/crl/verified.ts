import type { CrlEntry, VerifiedCrl } from './types.js';

// Module-private registry: membership proves that verifyCrl or mergeCrl built the
// object, which a structural check could not.
const authentic = new WeakSet<object>();

export function issueVerifiedCrl(fields: Omit<VerifiedCrl, 'entries'> & { entries: CrlEntry[] }): VerifiedCrl {
  const crl: VerifiedCrl = Object.freeze({
    ...fields,
    entries: Object.freeze(fields.entries.map((e) => Object.freeze({ ...e }))),
  });
  authentic.add(crl);
  return crl;
}

export function isVerifiedCrl(value: unknown): value is VerifiedCrl {
  return typeof value === 'object' && value !== null && authentic.has(value);
}

// Index by attestation id, built on first use: a relying party checks many
// attestations against one list.
const indexes = new WeakMap<VerifiedCrl, Map<string, CrlEntry>>();

export function findRevocation(crl: VerifiedCrl, attestationId: string): CrlEntry | undefined {
  let index = indexes.get(crl);
  if (index === undefined) {
    index = new Map(crl.entries.map((e) => [e.attestation_id, e]));
    indexes.set(crl, index);
  }
  return index.get(attestationId);
}
