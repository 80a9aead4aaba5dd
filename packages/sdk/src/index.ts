// Public API of @cauri/sdk: the typed client, webhook verification, and the offline verifiers of
// @cauri/verifier, so that an integrator needs one package.

export {
  CauriClient,
  type ApiResponse,
  type CallOptions,
  type CauriClientOptions,
  type ListOptions,
  type RequestOptions,
} from './client.js';
export { CauriApiError, CauriNetworkError, type CauriErrorCode, type CauriErrorDetail } from './errors.js';
export type { EventStreamOptions } from './event-stream.js';
export { Paginator, type Page } from './pagination.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
export type * from './types.js';

export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  WEBHOOK_IDEMPOTENCY_HEADER,
  WebhookVerificationError,
  parseWebhookEvent,
  verifyWebhookSignature,
  webhookSignatureHeader,
  type WebhookVerification,
  type WebhookVerificationFailure,
  type WebhookVerifyOptions,
} from './webhooks.js';

// Offline verification (no network once the key document and a CRL are held).
export { mergeCrl, verifyAttestation, verifyCrl, verifySnapshot, verifySnapshotChain, verifySnapshotProof } from '@cauri/verifier';
export type {
  AttestationReason,
  AttestationVerification,
  CrlMerge,
  CrlMergeReason,
  CrlVerification,
  KeyDocument,
  SnapshotChainReason,
  SnapshotChainVerification,
  SnapshotProofReason,
  SnapshotProofVerification,
  SnapshotReason,
  SnapshotVerification,
  VerifiedCrl,
  VerifyAttestationOptions,
  VerifySnapshotProofOptions,
} from '@cauri/verifier';
