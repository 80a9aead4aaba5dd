/** KYC levels and the checks each requires; higher levels include every check of the lower ones. */
export const KYC_LEVELS = ['KYC1', 'KYC2', 'KYC3'] as const;
export type KycLevel = (typeof KYC_LEVELS)[number];

export const VERIFICATION_TYPES = ['id_doc', 'address', 'selfie', 'liveness', 'source_of_funds', 'pep'] as const;
export type VerificationType = (typeof VERIFICATION_TYPES)[number];

const OWN_REQUIREMENTS: Readonly<Record<KycLevel, readonly VerificationType[]>> = {
  KYC1: ['id_doc', 'selfie'],
  KYC2: ['address', 'liveness'],
  KYC3: ['source_of_funds', 'pep'],
};

/** Every verification type `level` requires, its own and those of the lower levels, in level order. */
export function requiredVerifications(level: KycLevel): VerificationType[] {
  return KYC_LEVELS.slice(0, KYC_LEVELS.indexOf(level) + 1).flatMap((l) => OWN_REQUIREMENTS[l]);
}

/** The required types absent from `present`, in level order. */
export function missingVerifications(level: KycLevel, present: Iterable<string>): VerificationType[] {
  const have = new Set(present);
  return requiredVerifications(level).filter((type) => !have.has(type));
}
