import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, OPTIONAL_BODY, StringEnum } from '../http/schemas.js';
import { JURISDICTIONS } from '../partners/markets.js';
import { KYC_LEVELS, VERIFICATION_TYPES } from './levels.js';

export const SUBJECT_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
export const REVOCATION_REASONS = ['superseded', 'compromised', 'subject_request', 'other'] as const;

export const KycVerification = Type.Object(
  {
    type: StringEnum(VERIFICATION_TYPES),
    verified_at: DateTime('When the check was done (not in the future; 5 minutes of clock skew allowed).'),
    method: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Free-text method label' })),
  },
  { additionalProperties: false, title: 'KycVerification' },
);

export const KycAttestationRequest = Type.Object(
  {
    subject_id: Type.String({
      pattern: SUBJECT_ID_PATTERN,
      description: 'Pseudonymous subject identifier chosen by the client: 1 to 128 of [A-Za-z0-9._:-]',
    }),
    level: StringEnum(KYC_LEVELS),
    jurisdictions: Type.Array(StringEnum(JURISDICTIONS), { minItems: 1, uniqueItems: true }),
    verifications: Type.Array(KycVerification, { minItems: 1, maxItems: 20 }),
  },
  { additionalProperties: false, title: 'KycAttestationRequest' },
);
export type KycAttestationRequest = Static<typeof KycAttestationRequest>;

/** The signed attestation: the response body is exactly this object, nothing added. */
export const KycAttestation = Type.Object(
  {
    id: Type.String({ description: 'Attestation identifier (att_...)' }),
    version: Type.Literal('1.0'),
    subject_id: Type.String(),
    level: StringEnum(KYC_LEVELS),
    issued_at: DateTime('Issue time (whole seconds)'),
    expires_at: DateTime('Expiry time (whole seconds)'),
    issuer: Type.String({ description: 'The lowercase service name' }),
    verifications: Type.Array(KycVerification),
    jurisdictions: Type.Array(StringEnum(JURISDICTIONS)),
    key_id: Type.String({ description: 'Matches a key_id of the issuer key document' }),
    signature: Type.String({ description: 'Ed25519, base64url, over the RFC 8785 form of the object without signature' }),
  },
  { title: 'KycAttestation' },
);
export type KycAttestation = Static<typeof KycAttestation>;

export const RevokeRequest = Type.Object(
  { reason: Type.Optional(StringEnum(REVOCATION_REASONS, { description: 'Default: other' })) },
  { additionalProperties: false, title: 'RevokeRequest', description: 'Optional: no body is the same as `{}`.', ...OPTIONAL_BODY },
);

export const Revocation = Type.Object(
  { attestation_id: Type.String(), revoked_at: DateTime(), reason: StringEnum(REVOCATION_REASONS) },
  { title: 'Revocation' },
);

/** The data of a `kyc.revoked` event: the revocation and the subject it concerns. */
export const RevocationEvent = Type.Object(
  { attestation_id: Type.String(), subject_id: Type.String(), revoked_at: DateTime(), reason: StringEnum(REVOCATION_REASONS) },
  { title: 'RevocationEvent' },
);
export type RevocationEvent = Static<typeof RevocationEvent>;

export const AttestationStatus = Type.Object(
  {
    attestation_id: Type.String(),
    status: StringEnum(['active', 'revoked', 'expired']),
    revoked_at: Nullable(DateTime()),
    reason: Nullable(StringEnum(REVOCATION_REASONS)),
  },
  { title: 'AttestationStatus' },
);

export const CrlEntry = Type.Object({ attestation_id: Type.String(), revoked_at: DateTime(), reason: StringEnum(REVOCATION_REASONS) });

export const Crl = Type.Object(
  {
    version: Type.Literal('1.0'),
    issuer: Type.String(),
    crl_number: Type.Integer({ minimum: 0, description: 'Grows by one with each revocation' }),
    base_crl_number: Type.Optional(Type.Integer({ minimum: 0, description: 'Delta lists only: entries after this number' })),
    issued_at: DateTime(),
    next_update: DateTime('issued_at + 15 minutes; fetch again by then'),
    entries: Type.Array(CrlEntry),
    key_id: Type.String(),
    signature: Type.String(),
  },
  { title: 'RevocationList' },
);

export const KeyDocument = Type.Object(
  {
    version: Type.Literal('1.0'),
    issuer: Type.String(),
    protocol: Type.Literal('kyc-attestation/v1'),
    keys: Type.Array(
      Type.Object({
        key_id: Type.String(),
        algorithm: Type.Literal('Ed25519'),
        public_key: Type.String({ description: 'Raw 32-byte public key, base64url' }),
        valid_from: DateTime(),
        valid_until: DateTime('End of the window: the rotation instant, or the planned end for the current key'),
      }),
    ),
    crl_endpoint: Type.String({ format: 'uri' }),
    contact: Type.String(),
  },
  { title: 'IssuerKeyDocument' },
);
