import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';

type Json = Record<string, any>;

const LEAP_SECOND = '2016-12-31T23:59:60Z';

// Every date-time the API accepts is one a JavaScript Date holds exactly. A leap second used to pass
// the format check, then fail when the attestation was signed (500) or match nothing as a filter.
for (const database of DATABASES) {
  describe(`date-time inputs on ${database.name}`, () => {
    test('a leap second in an attestation is a validation error naming the field', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);

      const res = await api.post('/v1/kyc/attestations', {
        subject_id: 'inv-2',
        level: 'KYC1',
        jurisdictions: ['UEMOA'],
        verifications: [
          { type: 'id_doc', verified_at: LEAP_SECOND },
          { type: 'selfie', verified_at: '2026-11-20T09:01:00Z' },
        ],
      });
      const body = (await res.json()) as Json;
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(body.code, 'validation_error');
      assert.deepEqual(
        body.details.map((d: Json) => [d.field, d.rule, d.value]),
        [['verifications.0.verified_at', 'format', LEAP_SECOND]],
      );
    });

    test('a leap second, hour 24 or February 30 in a filter or a test clock is a validation error', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);

      for (const query of [
        'created_lt=2030-12-31T23:59:60Z',
        'created_gte=2030-12-31T23:59:60Z',
        'created_gte=2030-12-31T24:00:00Z',
        'created_lt=2030-02-30T10:00:00Z',
      ]) {
        const [field, value] = query.split('=') as [string, string];
        const listed = await api.call('GET', `/v1/orders?${query.replaceAll(':', '%3A')}`);
        const error = (await listed.json()) as Json;
        assert.equal(listed.status, 422, `${query}: ${JSON.stringify(error)}`);
        assert.equal(error.code, 'validation_error');
        assert.deepEqual(
          error.details.map((d: Json) => [d.field, d.rule, d.value]),
          [[field, 'format', value]],
        );
      }
      const inRange = await api.call('GET', `/v1/orders?created_gte=${encodeURIComponent('2016-12-31T23:59:59+01:00')}`);
      assert.equal(inRange.status, 200);

      const clock = await api.post('/v1/test-clocks', { frozen_time: '2026-11-23T23:59:60Z' });
      const refused = (await clock.json()) as Json;
      assert.equal(clock.status, 422, JSON.stringify(refused));
      assert.deepEqual(
        refused.details.map((d: Json) => [d.field, d.rule]),
        [['frozen_time', 'format']],
      );
    });
  });
}
