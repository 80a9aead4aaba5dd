import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyAttestation, verifyCrl } from '@cauri/verifier';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { KYC2_REQUEST, apiClient } from '../support/api.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { ClientId } from '../../src/lib/ids.js';
import type { KycAttestationRequest } from '../../src/kyc/kyc.schemas.js';

type Json = Record<string, any>;

for (const database of DATABASES) {
  test(`on ${database.name}, a key past its planned end with no rotation made: what is signed next still verifies`, async (t) => {
    // No worker runs here, as in a deployment whose worker process was down on the day it should
    // have rotated: the current key's published window has ended.
    const clock = new ManualClock('2026-11-22T10:00:00.300Z');
    const runtime = await startRuntime(t, database, { CAURI_ATTESTATION_VALIDITY_DAYS: '3650' }, { clock });
    const base = await listen(runtime);
    const api = await apiClient(runtime, base);
    const request = {
      ...KYC2_REQUEST,
      verifications: KYC2_REQUEST.verifications.map((v) => ({ ...v, verified_at: '2026-11-22T09:00:00Z' })),
    };
    const before = (await (await api.post('/v1/kyc/attestations', request)).json()) as Json;
    const planned = Date.parse(((await (await fetch(`${base}/.well-known/cauri`)).json()) as Json).keys[0].valid_until);

    // Two years and three days past the planned end: the next key's planned end has passed too.
    clock.set(new Date(planned + (2 * 365 + 3) * 86_400_000));
    const { kyc } = runtime.services;
    const signed = await kyc.sign(request as KycAttestationRequest);
    const after = await runtime.storage.transact((trx) =>
      kyc.store(trx, api.clientId as ClientId, request as KycAttestationRequest, signed),
    );
    const keyDocument = (await (await fetch(`${base}/.well-known/cauri`)).json()) as Json;
    const crl = (await (await fetch(`${base}/v1/kyc/crl`)).json()) as Json;

    const now = clock.now();
    assert.equal(verifyCrl(crl, keyDocument).valid, true, JSON.stringify(verifyCrl(crl, keyDocument)));
    for (const attestation of [before, after]) {
      const verdict = verifyAttestation(attestation, keyDocument, { now, crl });
      assert.equal(verdict.valid, true, JSON.stringify([verdict, attestation.issued_at, keyDocument.keys]));
    }
    assert.notEqual(after.key_id, before.key_id);
    assert.equal(keyDocument.keys[0].valid_until, new Date(planned).toISOString().replace('.000Z', 'Z'), 'the old window is not widened');
    for (let i = 1; i < keyDocument.keys.length; i++)
      assert.equal(keyDocument.keys[i].valid_from, keyDocument.keys[i - 1].valid_until, 'consecutive windows');
    assert.equal(keyDocument.keys.length, 4, 'one key a year, each opening where the last was planned to end');
  });
}
