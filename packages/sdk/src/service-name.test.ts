import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyAttestation } from './index.js';
import { service } from './testing/service.js';
import { setup } from './testing/client-setup.js';

// A deployment run under another name (CAURI_SERVICE_NAME) publishes its key document at
// `/.well-known/<name>`: the client finds it there, from the name it is given or, by default, from
// the revocation list's `issuer` (the service's name).

for (const db of (await service()).DATABASES) {
  test(`keyDocument() of a service run under another name, on ${db.name}`, async (t) => {
    const c = await setup(t, { CAURI_SERVICE_NAME: 'my-broker' }, db);
    for (const client of [c.client(), c.client({ serviceName: 'my-broker' })]) {
      const keys = await client.attestations.keyDocument();
      assert.equal(keys.issuer, 'my-broker');
      const attestation = await client.attestations.create(c.kyc2);
      assert.equal(verifyAttestation(attestation, keys, { now: c.clock.now() }).valid, true);
    }
    const fetched = c.log.filter((e) => e.path.startsWith('/.well-known/')).map((e) => `${e.path} ${e.status}`);
    assert.deepEqual(fetched, ['/.well-known/my-broker 200', '/.well-known/my-broker 200']);
    // The name is read once per client, and not at all when given.
    assert.equal(c.log.filter((e) => e.path === '/v1/kyc/crl').length, 1);
  });
}
