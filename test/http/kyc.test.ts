import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { canonicalize, mergeCrl, verifyAttestation, verifyCrl } from '@cauri/verifier';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { KYC2_REQUEST, apiClient } from '../support/api.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { ClientId } from '../../src/lib/ids.js';
import type { KycAttestationRequest } from '../../src/kyc/kyc.schemas.js';

type Json = Record<string, any>;

async function json(res: Response): Promise<Json> {
  return (await res.json()) as Json;
}

for (const database of DATABASES) {
  describe(`KYC attestations on ${database.name}`, () => {
    test('an issued attestation is the signed object and verifies offline with two implementations', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const res = await api.post('/v1/kyc/attestations', KYC2_REQUEST);
      assert.equal(res.status, 201);
      const attestation = await json(res);
      assert.deepEqual(Object.keys(attestation).sort(), [
        'expires_at',
        'id',
        'issued_at',
        'issuer',
        'jurisdictions',
        'key_id',
        'level',
        'signature',
        'subject_id',
        'verifications',
        'version',
      ]);
      assert.equal(attestation.version, '1.0');
      assert.equal(attestation.issuer, 'cauri');
      assert.match(attestation.id, /^att_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
      assert.match(attestation.issued_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(Date.parse(attestation.expires_at) - Date.parse(attestation.issued_at), 365 * 86400_000);

      const keyDocument = await json(await fetch(`${base}/.well-known/cauri`));
      assert.equal(keyDocument.protocol, 'kyc-attestation/v1');
      assert.equal(keyDocument.version, '1.0');
      assert.equal(keyDocument.crl_endpoint, `${runtime.config.publicUrl}/v1/kyc/crl`);
      const verdict = verifyAttestation(attestation, keyDocument, { now: new Date() });
      assert.equal(verdict.valid, true, JSON.stringify(verdict));

      // An independent Ed25519 implementation over the canonical bytes, as any verifier would do.
      const key = keyDocument.keys.find((k: Json) => k.key_id === attestation.key_id);
      const { signature, ...unsigned } = attestation;
      const ok = await ed.verifyAsync(
        Buffer.from(signature, 'base64url'),
        new TextEncoder().encode(canonicalize(unsigned)),
        Buffer.from(key.public_key, 'base64url'),
      );
      assert.equal(ok, true);

      // GET returns exactly the same object.
      assert.deepEqual(await json(await api.call('GET', `/v1/kyc/attestations/${attestation.id}`)), attestation);
      const status = await json(await api.call('GET', `/v1/kyc/attestations/${attestation.id}/status`));
      assert.deepEqual(status, { attestation_id: attestation.id, status: 'active', revoked_at: null, reason: null });

      // kyc.attested was recorded with the attestation as data, in the same transaction.
      const events = await runtime.storage.db.selectFrom('events').selectAll().where('type', '=', 'kyc.attested').execute();
      assert.equal(events.length, 1);
      assert.deepEqual(JSON.parse(events[0]?.data ?? ''), attestation);
    });

    test('attestations from before and after a key rotation both verify; tampering is rejected', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const first = await json(await api.post('/v1/kyc/attestations', KYC2_REQUEST));
      await runtime.services.keys.rotate('attestation');
      const second = await json(await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: 'inv-0002' }));
      assert.notEqual(first.key_id, second.key_id);
      const keyDocument = await json(await fetch(`${base}/.well-known/cauri`));
      assert.equal(keyDocument.keys.length, 2);
      assert.equal(keyDocument.keys[0].valid_until, keyDocument.keys[1].valid_from, 'consecutive windows');
      for (const a of [first, second])
        assert.equal(
          verifyAttestation(a, keyDocument).valid,
          true,
          JSON.stringify([verifyAttestation(a, keyDocument), a.issued_at, keyDocument.keys]),
        );
      assert.equal(verifyAttestation({ ...first, level: 'KYC3' }, keyDocument).reason, 'bad_signature');
      assert.equal(verifyAttestation({ ...first, key_id: second.key_id }, keyDocument).reason, 'key_not_valid_at_issue');
    });

    test('a rotation between signing and storing: the attestation is signed again with the key now current', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const { kyc, keys } = runtime.services;
      const request = KYC2_REQUEST as KycAttestationRequest;
      const clientId = api.clientId as ClientId;
      const signed = await kyc.sign(request);
      const { current } = await keys.rotate('attestation');
      assert.notEqual(signed.keyId, current.id);
      const stored = await runtime.storage.transact((trx) => kyc.store(trx, clientId, request, signed));
      assert.equal(stored.key_id, current.id, 'not the key whose window closed');
      const keyDocument = await json(await fetch(`${base}/.well-known/cauri`));
      assert.equal(verifyAttestation(stored, keyDocument).valid, true);
      const read = await json(await api.call('GET', `/v1/kyc/attestations/${stored.id}`));
      assert.deepEqual(read, stored, 'what is stored is what was re-signed');
      // Without a rotation the signature made off the transaction is the one stored.
      const other = { ...request, subject_id: 'inv-0003' };
      const again = await kyc.sign(other);
      const kept = await runtime.storage.transact((trx) => kyc.store(trx, clientId, other, again));
      assert.equal(kept.signature, again.attestation.signature);
    });

    test('revocation: status, the signed list with deltas and ETag, kyc.revoked once', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await json(await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: `inv-${i}` }))).id);
      const keyDocument = await json(await fetch(`${base}/.well-known/cauri`));

      const empty = await fetch(`${base}/v1/kyc/crl`);
      assert.equal(empty.headers.get('cache-control'), 'public, max-age=900');
      const emptyList = await json(empty);
      assert.equal(emptyList.crl_number, 0);
      assert.equal(verifyCrl(emptyList, keyDocument).valid, true);
      const again = await fetch(`${base}/v1/kyc/crl`, { headers: { 'if-none-match': empty.headers.get('etag') ?? '' } });
      assert.equal(again.status, 304);
      // `*` matches any current representation (RFC 9110 §13.1.2).
      const any = await fetch(`${base}/v1/kyc/crl`, { headers: { 'if-none-match': '*' } });
      assert.equal(any.status, 304);
      assert.equal(any.headers.get('etag'), empty.headers.get('etag'));

      const revoke = await api.post(`/v1/kyc/attestations/${ids[0]}/revoke`, { reason: 'compromised' });
      assert.equal(revoke.status, 200);
      const record = await json(revoke);
      assert.deepEqual(Object.keys(record).sort(), ['attestation_id', 'reason', 'revoked_at']);
      assert.equal(record.reason, 'compromised');
      const twice = await api.post(`/v1/kyc/attestations/${ids[0]}/revoke`, { reason: 'other' });
      assert.deepEqual(await json(twice), record, 'revoking again returns the first record');
      const revokedEvents = await runtime.storage.db.selectFrom('events').select('data').where('type', '=', 'kyc.revoked').execute();
      assert.equal(revokedEvents.length, 1);
      assert.deepEqual(Object.keys(JSON.parse(revokedEvents[0]?.data ?? '{}')).sort(), [
        'attestation_id',
        'reason',
        'revoked_at',
        'subject_id',
      ]);
      assert.equal((await json(await api.call('GET', `/v1/kyc/attestations/${ids[0]}/status`))).status, 'revoked');

      const full1 = await json(await fetch(`${base}/v1/kyc/crl`));
      assert.equal(full1.crl_number, 1);
      const attestation = await json(await api.call('GET', `/v1/kyc/attestations/${ids[0]}`));
      const verdict = verifyAttestation(attestation, keyDocument, { crl: full1 });
      assert.equal(verdict.reason, 'revoked');

      // A relying party syncing with ?since= rebuilds exactly the full list.
      await api.post(`/v1/kyc/attestations/${ids[2]}/revoke`, {});
      const delta = await json(await fetch(`${base}/v1/kyc/crl?since=1`));
      assert.equal(delta.base_crl_number, 1);
      assert.equal(delta.entries.length, 1);
      const verifiedFull = verifyCrl(full1, keyDocument);
      const verifiedDelta = verifyCrl(delta, keyDocument);
      assert.ok(verifiedFull.valid && verifiedDelta.valid);
      const merged = mergeCrl(verifiedFull.crl, verifiedDelta.crl);
      assert.ok(merged.valid);
      const full2 = await json(await fetch(`${base}/v1/kyc/crl`));
      assert.deepEqual(merged.crl.entries, full2.entries);
      assert.equal(merged.crl.crl_number, full2.crl_number);
      assert.equal(full2.entries[1].reason, 'other', 'default reason');
      // A delta from the current number lists nothing, and is dated like the full list it stands for:
      // never before the revocation that number counts.
      const upToDate = await json(await fetch(`${base}/v1/kyc/crl?since=2`));
      assert.deepEqual([upToDate.crl_number, upToDate.base_crl_number, upToDate.entries], [2, 2, []]);
      assert.ok(verifyCrl(upToDate, keyDocument).valid);
      assert.ok(
        upToDate.issued_at >= full2.entries[1].revoked_at,
        `dated ${upToDate.issued_at}, before the revocation at ${full2.entries[1].revoked_at}`,
      );
      assert.equal(upToDate.issued_at, full2.issued_at);

      const tooFar = await fetch(`${base}/v1/kyc/crl?since=9`);
      assert.equal(tooFar.status, 422);
      assert.equal((await json(tooFar)).details[0].field, 'since');
    });

    test('the list is re-signed every 15 minutes and identical across processes', async (t) => {
      const clock = new ManualClock('2026-11-22T10:07:00Z');
      const runtime = await startRuntime(t, database, {}, { clock });
      const base = await listen(runtime);
      const first = await json(await fetch(`${base}/v1/kyc/crl`));
      assert.ok(Date.parse(first.issued_at) <= clock.now().getTime());
      assert.equal(Date.parse(first.next_update) - Date.parse(first.issued_at), 15 * 60_000);
      clock.advance(15 * 60_000);
      const later = await json(await fetch(`${base}/v1/kyc/crl`));
      assert.ok(Date.parse(later.issued_at) > Date.parse(first.issued_at));
      assert.ok(clock.now().getTime() - Date.parse(later.issued_at) < 15 * 60_000, 'never older than 15 minutes when served');
    });

    test('bad input: each a 422 or 404 naming the field and rule, nothing stored', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const other = await apiClient(runtime, base, undefined, 'other');
      const v = KYC2_REQUEST.verifications;
      const future = new Date(Date.now() + 10 * 60_000).toISOString();
      const cases: [string, unknown, string, string, unknown?][] = [
        ['unknown level', { ...KYC2_REQUEST, level: 'KYC9' }, 'level', 'enum', 'KYC9'],
        ['unknown jurisdiction', { ...KYC2_REQUEST, jurisdictions: ['EU'] }, 'jurisdictions.0', 'enum', 'EU'],
        ['duplicate jurisdictions', { ...KYC2_REQUEST, jurisdictions: ['UEMOA', 'UEMOA'] }, 'jurisdictions', 'uniqueItems'],
        ['duplicate verification', { ...KYC2_REQUEST, verifications: [...v, v[0]] }, 'verifications.4.type', 'unique', 'id_doc'],
        ['missing liveness', { ...KYC2_REQUEST, verifications: v.slice(0, 3) }, 'verifications', 'required_verification', 'liveness'],
        [
          'verified_at in the future',
          { ...KYC2_REQUEST, verifications: [{ ...v[0], verified_at: future }, ...v.slice(1)] },
          'verifications.0.verified_at',
          'not_in_future',
        ],
        [
          'verified_at not a date-time',
          { ...KYC2_REQUEST, verifications: [{ ...v[0], verified_at: 'yesterday' }, ...v.slice(1)] },
          'verifications.0.verified_at',
          'format',
          'yesterday',
        ],
        ['subject_id forbidden characters', { ...KYC2_REQUEST, subject_id: 'jean dupont' }, 'subject_id', 'pattern', 'jean dupont'],
        ['subject_id too long', { ...KYC2_REQUEST, subject_id: 'x'.repeat(129) }, 'subject_id', 'pattern'],
        ['empty jurisdictions', { ...KYC2_REQUEST, jurisdictions: [] }, 'jurisdictions', 'minItems'],
        ['empty verifications', { ...KYC2_REQUEST, verifications: [] }, 'verifications', 'minItems'],
        ['extra member', { ...KYC2_REQUEST, nationality: 'SN' }, 'nationality', 'additionalProperties', 'SN'],
      ];
      for (const [name, body, field, rule, value] of cases) {
        const res = await api.post('/v1/kyc/attestations', body);
        const error = await json(res);
        assert.equal(res.status, 422, name);
        assert.equal(error.code, 'validation_error', name);
        const detail = error.details.find((d: Json) => d.field === field && d.rule === rule);
        assert.ok(detail, `${name}: ${JSON.stringify(error.details)}`);
        if (value !== undefined) assert.deepEqual(detail.value, value, name);
      }
      const missingKey = await api.call('POST', '/v1/kyc/attestations', KYC2_REQUEST);
      assert.deepEqual(
        (await json(missingKey)).details.map((d: Json) => [d.field, d.rule]),
        [['Idempotency-Key', 'required']],
      );
      const badKey = await api.post('/v1/kyc/attestations', KYC2_REQUEST, 'abc');
      assert.deepEqual(
        (await json(badKey)).details.map((d: Json) => [d.field, d.rule]),
        [['Idempotency-Key', 'format']],
      );
      assert.equal((await runtime.storage.db.selectFrom('attestations').selectAll().execute()).length, 0, 'nothing stored');
      assert.equal((await runtime.storage.db.selectFrom('events').selectAll().execute()).length, 0);

      const mine = await json(await api.post('/v1/kyc/attestations', KYC2_REQUEST));
      // The owner reads it first, so that its document is then answered from memory: the owner is
      // still checked.
      assert.equal((await api.call('GET', `/v1/kyc/attestations/${mine.id}`)).status, 200);
      assert.ok(runtime.services.kyc.cachedDocuments >= 1);
      assert.match(await (await fetch(`${base}/metrics`)).text(), /^cauri_attestation_documents_cached [1-9]\d*$/m);
      for (const path of [`/v1/kyc/attestations/${mine.id}`, `/v1/kyc/attestations/${mine.id}/status`]) {
        const res = await other.call('GET', path);
        assert.equal(res.status, 404, "another client's attestation is not found");
      }
      assert.equal((await other.post(`/v1/kyc/attestations/${mine.id}/revoke`, {})).status, 404);
      assert.equal((await api.post('/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz/revoke', {})).status, 404);
      assert.equal((await api.call('GET', '/v1/kyc/attestations/not-an-id')).status, 404);
      assert.equal((await api.post(`/v1/kyc/attestations/${mine.id}/revoke`, { reason: 'bored' })).status, 422);
      assert.equal((await json(await api.call('GET', `/v1/kyc/attestations/${mine.id}/status`))).status, 'active', 'nothing changed');
    });

    test('revoking takes no body, an empty one or {} alike (reason other); the same key replays across them', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await json(await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: `inv-bodyless-${i}` }))).id);
      const revoke = (id: string, body: string | undefined, key: string) =>
        api.call('POST', `/v1/kyc/attestations/${id}/revoke`, body, { 'idempotency-key': key });

      const key = randomUUID();
      const none = await revoke(ids[0] as string, undefined, key); // no body, no Content-Type
      assert.equal(none.status, 200);
      const record = await json(none);
      assert.equal(record.reason, 'other');
      const sameAsEmptyObject = await revoke(ids[0] as string, '{}', key);
      assert.equal(sameAsEmptyObject.status, 200);
      assert.equal(sameAsEmptyObject.headers.get('idempotent-replayed'), 'true', 'no body and {} are the same request');
      assert.deepEqual(await json(sameAsEmptyObject), record);
      const reused = await revoke(ids[0] as string, '{"reason":"compromised"}', key);
      assert.equal(reused.status, 422);
      assert.equal((await json(reused)).details[0].rule, 'idempotency_key_reused');

      const empty = await revoke(ids[1] as string, '', randomUUID()); // Content-Type: application/json, empty body
      assert.equal(empty.status, 200);
      assert.equal((await json(empty)).reason, 'other');
      const nullBody = await revoke(ids[2] as string, 'null', randomUUID()); // a body, and not an object
      assert.equal(nullBody.status, 422);
      assert.deepEqual(
        (await json(nullBody)).details.map((d: Json) => [d.field, d.rule]),
        [['body', 'type']],
      );
      const withReason = await revoke(ids[2] as string, '{"reason":"subject_request"}', randomUUID());
      assert.equal((await json(withReason)).reason, 'subject_request');
      const missingKey = await api.call('POST', `/v1/kyc/attestations/${ids[2]}/revoke`);
      assert.deepEqual(
        (await json(missingKey)).details.map((d: Json) => [d.field, d.rule]),
        [['Idempotency-Key', 'required']],
        'the key is still required',
      );
      assert.equal((await runtime.storage.db.selectFrom('events').select('id').where('type', '=', 'kyc.revoked').execute()).length, 3);
    });

    test('signed documents held in memory: the same bytes as stored, never more than the bound, none from a transaction', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await json(await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: `inv-cache-${i}` }))).id);
      const { KycService } = await import('../../src/kyc/attestation.service.js');
      const kyc = new KycService(runtime.services.keys, runtime.clock, {
        issuer: 'cauri',
        validityDays: 365,
        livemode: false,
        dialect: runtime.storage.dialect,
        documentCacheSize: 2,
      });
      const clientId = api.clientId as ClientId;
      const stored = async (id: string) =>
        (await runtime.storage.db.selectFrom('attestations').select('document').where('id', '=', id).executeTakeFirstOrThrow()).document;
      await runtime.storage.db.transaction().execute(async (trx) => kyc.document(trx, clientId, ids[0] as string));
      assert.equal(kyc.cachedDocuments, 0, 'a read inside a transaction is not kept');
      for (const id of ids) assert.equal(await kyc.document(runtime.storage.db, clientId, id), await stored(id));
      assert.equal(kyc.cachedDocuments, 2, 'the oldest entry was dropped');
      for (const id of ids)
        assert.equal(await kyc.document(runtime.storage.db, clientId, id), await stored(id), 'the same bytes from memory');
      await assert.rejects(kyc.document(runtime.storage.db, 'cli_01kdvdna00zzzzzzzzzzzzzzzz' as ClientId, ids[2] as string), {
        code: 'not_found',
      });
    });

    test('idempotency over HTTP: replay with the header, reuse with another body, 50 concurrent requests', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      const key = randomUUID();
      const first = await api.post('/v1/kyc/attestations', KYC2_REQUEST, key);
      const firstBody = await first.text();
      const replay = await api.post('/v1/kyc/attestations', KYC2_REQUEST, key);
      assert.equal(replay.status, 201);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(await replay.text(), firstBody, 'byte-for-byte the first response');
      const reused = await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: 'someone-else' }, key);
      assert.equal(reused.status, 422);
      assert.equal((await json(reused)).details[0].rule, 'idempotency_key_reused');

      const concurrent = randomUUID();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: 'burst' }, concurrent)),
      );
      const statuses = results.map((r) => r.status);
      assert.ok(
        statuses.every((s) => s === 201 || s === 409),
        String(statuses),
      );
      for (const r of results.filter((x) => x.status === 409)) assert.equal(r.headers.get('retry-after'), '1');
      const bodies = new Set(await Promise.all(results.filter((r) => r.status === 201).map((r) => r.text())));
      assert.equal(bodies.size, 1, 'every success is the same attestation');
      const stored = await runtime.storage.db.selectFrom('attestations').select('id').where('subject_id', '=', 'burst').execute();
      assert.equal(stored.length, 1);
      assert.equal((await runtime.storage.db.selectFrom('events').select('id').where('type', '=', 'kyc.attested').execute()).length, 2);
    });
  });
}
