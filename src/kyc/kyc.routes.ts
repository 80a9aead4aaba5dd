import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { authOf } from '../auth/authenticate.js';
import { replyIdempotently } from '../idempotency/idempotent-reply.js';
import { noneMatchHits } from '../http/etag.js';
import { absentBodyIsEmpty } from '../http/json-body.js';
import { ErrorBody } from '../http/schemas.js';
import { IdempotencyHeaders, protectedErrors } from '../http/schemas-auth.js';
import { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { KycService } from './attestation.service.js';
import type { CrlService } from './crl.service.js';
import { buildKeyDocument } from './key-document.js';
import { AttestationStatus, Crl, KeyDocument, KycAttestation, KycAttestationRequest, Revocation, RevokeRequest } from './kyc.schemas.js';

export interface KycRouteDeps {
  db: Kysely<Database>;
  kyc: KycService;
  crl: CrlService;
  keys: KeyRing;
  idempotency: IdempotencyService;
  serviceName: string;
  publicUrl: string;
  contact: string;
}

const IdParams = Type.Object({ id: Type.String() });

export const kycRoutes: FastifyPluginAsyncTypebox<KycRouteDeps> = async (app, deps) => {
  const { db, kyc, crl, idempotency } = deps;

  app.post(
    '/v1/kyc/attestations',
    {
      config: { scope: 'kyc:write' },
      schema: {
        operationId: 'createAttestation',
        tags: ['KYC attestations'],
        summary: 'Issue a signed KYC attestation',

        headers: IdempotencyHeaders,
        body: KycAttestationRequest,
        response: { 201: KycAttestation, ...protectedErrors(409, 422) },
      },
    },
    async (request, reply) => {
      // The key is checked first, so that a missing or malformed key is reported before the body's rules.
      IdempotencyService.checkKey(request.headers['idempotency-key'] as string | undefined);
      const signed = await kyc.sign(request.body);
      return replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 201,
        body: await kyc.store(trx, authOf(request).clientId, request.body, signed),
      }));
    },
  );

  app.get(
    '/v1/kyc/attestations/:id',
    {
      config: { scope: 'kyc:read' },
      schema: {
        operationId: 'getAttestation',
        tags: ['KYC attestations'],
        summary: 'Read an attestation: exactly the signed object',

        params: IdParams,
        response: { 200: KycAttestation, ...protectedErrors(404) },
      },
    },
    // The stored text is sent as it is (a string with its content type set is not serialised again):
    // exactly the object that was signed and first returned.
    async (request, reply) =>
      (reply as FastifyReply)
        .type('application/json; charset=utf-8')
        .send(await kyc.document(db, authOf(request).clientId, request.params.id)),
  );

  app.get(
    '/v1/kyc/attestations/:id/status',
    {
      config: { scope: 'kyc:read' },
      schema: {
        operationId: 'getAttestationStatus',
        tags: ['KYC attestations'],
        summary: 'Whether an attestation is active, revoked or expired',

        params: IdParams,
        response: { 200: AttestationStatus, ...protectedErrors(404) },
      },
    },
    async (request) => kyc.status(db, authOf(request).clientId, request.params.id),
  );

  app.post(
    '/v1/kyc/attestations/:id/revoke',
    {
      config: { scope: 'kyc:write' },
      preValidation: absentBodyIsEmpty,
      schema: {
        operationId: 'revokeAttestation',
        tags: ['KYC attestations'],
        summary: 'Revoke an attestation (adds it to the revocation list; revoking again returns the same record)',
        description: 'The body is optional: none, an empty one and `{}` all revoke with reason `other`.',

        headers: IdempotencyHeaders,
        params: IdParams,
        body: RevokeRequest,
        response: { 200: Revocation, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 200,
        body: await kyc.revoke(trx, authOf(request).clientId, request.params.id, request.body.reason ?? 'other'),
      })),
  );

  app.get(
    '/v1/kyc/crl',
    {
      schema: {
        operationId: 'getRevocationList',
        tags: ['KYC attestations'],
        summary: 'The signed revocation list (public); ?since=N returns only the entries after number N',
        querystring: Type.Object({ since: Type.Optional(Type.Integer({ minimum: 0 })) }, { additionalProperties: false }),
        response: { 200: Crl, 304: Type.Null({ description: 'Not modified (If-None-Match)' }), 422: ErrorBody, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const signed = await crl.current(request.query.since ?? null);
      // The signed bytes are sent as they were signed and hashed for the ETag, not re-serialised.
      const raw = reply as FastifyReply;
      raw.header('etag', signed.etag).header('cache-control', 'public, max-age=900');
      if (noneMatchHits(request.headers['if-none-match'], signed.etag)) return raw.code(304).send();
      return raw.type('application/json; charset=utf-8').send(Buffer.from(signed.body));
    },
  );

  app.get(
    `/.well-known/${deps.serviceName}`,
    {
      schema: {
        operationId: 'getIssuerKeyDocument',
        tags: ['KYC attestations'],
        summary: 'The issuer key document: every attestation key with its validity window',
        response: { 200: KeyDocument, 429: ErrorBody },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return buildKeyDocument(deps.keys, { issuer: deps.serviceName, publicUrl: deps.publicUrl, contact: deps.contact });
    },
  );
};
