import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Runtime } from '../../src/app.js';
import { deriveKey } from '../../src/lib/crypto.js';
import { setPartnerFixCredentials, setPartnerFixTls } from '../../src/partners/partner.repository.js';
import { importPartners } from '../../src/partners/partner.service.js';
import { FixCredentialSealer, type FixTlsMaterial } from '../../src/routing/fix/credentials.js';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { mergeTlsMaterial } from '../../src/routing/fix/tls-material.js';
import { KYC2_REQUEST, apiClient } from '../support/api.js';
import { TestPki, type Issued } from '../support/certificates.js';
import { DATABASES, listen, startRuntimeIn, testEnvironment, type DatabaseCase, type TestEnvironment } from '../support/harness.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';
import { startExecutor, type Executor } from '../support/quickfix.js';

// TLS to the SGI's gateway: QuickFIX's executor as a TLS acceptor that requires a client certificate
// from an authority it trusts. It listens on every address, so the tests run inside a network
// namespace that has only loopback.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX over TLS with a client certificate, against QuickFIX in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  type Json = Record<string, any>;
  let nextPort = 5200;

  const pki = new TestPki();
  // The gateway's certificate comes from the SGI's own authority; the client certificates the
  // gateway takes come from another one it trusts.
  const gatewayCa = pki.authority('Gateway CA');
  const gateway = pki.leaf('gateway', 'localhost', gatewayCa, { dns: ['localhost'], ip: ['127.0.0.1'] });
  const clientCa = pki.authority('Client CA');
  const client = pki.leaf('client', 'CAURI', clientCa, { client: true });
  const rogueCa = pki.authority('Rogue CA');
  const rogueClient = pki.leaf('rogue-client', 'CAURI', rogueCa, { client: true });

  const material = (input: { client?: Issued; ca?: Issued }): FixTlsMaterial =>
    mergeTlsMaterial(
      null,
      {
        ...(input.client === undefined ? {} : { cert: input.client.cert, key: input.client.key }),
        ...(input.ca === undefined ? {} : { ca: input.ca.cert }),
      },
      Date.now(),
    );

  async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  interface Deployment {
    env: TestEnvironment;
    partnerId: string;
    executor: Executor;
    sealer: FixCredentialSealer;
    /** Replaces the partner's TLS material, as `cauri partners tls` does; read at the next connection. */
    setTls(tls: FixTlsMaterial | null): Promise<void>;
  }

  /** A TLS executor, and a deployment whose partner reaches it at `localhost` over TLS (the default), with `tls` stored. */
  async function deployment(t: TestContext, database: DatabaseCase, tls: FixTlsMaterial | null): Promise<Deployment> {
    const executor = await startExecutor(t, nextPort++, {
      tls: { cert: gateway.certPath, key: gateway.keyPath, clientCa: clientCa.certPath },
    });
    const env = testEnvironment(t, database, { CAURI_WORKERS: 'all' });
    const sealer = new FixCredentialSealer(deriveKey(env.config.masterKey as Buffer, 'fix-credentials'));
    const storage = await openDatabase(env.config, env.options);
    let partnerId: string;
    try {
      const fix = { host: 'localhost', port: executor.port, sender_comp_id: 'CAURI', target_comp_id: 'EXEC', account: 'CAURI-TEST' };
      const report = await storage.transact((trx) =>
        importPartners(trx, [{ name: 'Tls Executor Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix }], {
          now: new Date(),
        }),
      );
      partnerId = report.applied[0]?.id ?? '';
      await storage.transact((trx) =>
        setPartnerFixCredentials(trx, partnerId, sealer.seal(partnerId, { username: 'cauri-user', password: 's3cret' }), Date.now()),
      );
      await storage.transact((trx) => setPartnerFixTls(trx, partnerId, tls === null ? null : sealer.sealTls(partnerId, tls), Date.now()));
    } finally {
      await storage.close();
    }
    return {
      env,
      partnerId,
      executor,
      sealer,
      async setTls(next) {
        const again = await openDatabase(env.config, env.options);
        try {
          await again.transact((trx) =>
            setPartnerFixTls(trx, partnerId, next === null ? null : sealer.sealTls(partnerId, next), Date.now()),
          );
        } finally {
          await again.close();
        }
      },
    };
  }

  const logons = (executor: Executor) => executor.messages().filter((m) => m.direction === 'incoming' && m.fields.get(35) === 'A');
  /** Handshakes the executor refused so far, but for the plain connection that checked it listened. */
  const refusedHandshakes = (executor: Executor) => executor.output().split('(SSL handshake failed)').length - 2;

  /** Waits until the runtime has recorded a failed connection whose error matches `pattern`, and returns the session row. */
  async function failedWith(t: TestContext, runtime: Runtime, partnerId: string, pattern: RegExp) {
    let session = await findSession(runtime.storage.db, partnerId);
    await waitFor(
      `a connection error matching ${pattern}`,
      async () => {
        session = await findSession(runtime.storage.db, partnerId);
        return pattern.test(session?.last_error ?? '');
      },
      60_000,
    );
    t.diagnostic(`last_error: ${session?.last_error}`);
    return session;
  }

  for (const database of DATABASES) {
    describe(`FIX over TLS on ${database.name}`, () => {
      test("with its client certificate and the gateway's authority, the session logs on over TLS and an order is filled", async (t) => {
        const d = await deployment(t, database, material({ client, ca: gatewayCa }));
        const runtime = await startRuntimeIn(t, d.env);
        const api = await apiClient(runtime, await listen(runtime));
        await waitFor('the FIX session to log on', () => runtime.services.fix.runner(d.partnerId)?.session != null, 60_000);
        // The executor verified the certificate cauri presented, and took the Logon after it (its log
        // may trail the session by a moment). An attempt cut short on a loaded machine may show as a
        // failed handshake (an early end of file), never as a refused certificate.
        await waitFor(
          "the executor's verification",
          () => /Certificate Verification: depth: 0, subject: \/CN=CAURI, issuer: \/CN=Client CA/.test(d.executor.output()),
          5000,
        );
        assert.doesNotMatch(d.executor.output(), /certificate verify failed/);
        await waitFor("the executor's log", () => logons(d.executor).length === 1, 5000);
        assert.equal(logons(d.executor)[0]?.fields.get(553), 'cauri-user');

        const attestation = (await (await api.post('/v1/kyc/attestations', KYC2_REQUEST)).json()) as Json;
        const res = await api.post('/v1/orders', {
          rcpt_to: d.partnerId,
          kyc_attestation_id: attestation.id,
          instrument: 'KOLA.BRVM',
          side: 'buy',
          qty: 10,
          limit_price_cents: 1_500_000,
        });
        assert.equal(res.status, 201);
        const order = (await res.json()) as Json;
        assert.equal(order.status, 'routed');
        await waitFor(
          'the fill',
          async () => ((await (await api.call('GET', `/v1/orders/${order.id}`)).json()) as Json).status === 'filled',
        );
      });
    });
  }

  describe('FIX over TLS: what the gateway or cauri refuses', () => {
    const database = DATABASES[0] as DatabaseCase;

    test('without a client certificate, or with one from an authority the gateway does not trust, the handshake fails and no Logon reaches the gateway', async (t) => {
      const d = await deployment(t, database, material({ ca: gatewayCa }));
      const runtime = await startRuntimeIn(t, d.env);
      await waitFor(
        'the gateway to refuse a handshake without a client certificate',
        () => /peer did not return a certificate/.test(d.executor.output()),
        60_000,
      );
      let session = await failedWith(
        t,
        runtime,
        d.partnerId,
        /^the gateway closed the TLS connection before answering the Logon \(does it accept the client certificate\?\)/,
      );
      assert.notEqual(session?.state, 'logged_on');

      // The material is read again before each connection: a client certificate of another authority.
      await d.setTls(material({ client: rogueClient, ca: gatewayCa }));
      await waitFor(
        'the gateway to refuse the rogue certificate',
        () =>
          /Certificate Verification: depth: 0, subject: \/CN=CAURI, issuer: \/CN=Rogue CA/.test(d.executor.output()) &&
          /certificate verify failed/.test(d.executor.output()),
      );
      session = await failedWith(
        t,
        runtime,
        d.partnerId,
        /^the gateway closed the TLS connection before answering the Logon \(does it accept the client certificate\?\)/,
      );
      assert.notEqual(session?.state, 'logged_on');
      assert.equal(runtime.services.fix.runner(d.partnerId)?.session, null);
      assert.equal(logons(d.executor).length, 0, 'the executor never took a Logon');
      assert.ok(refusedHandshakes(d.executor) >= 2);

      // With the right certificate, the same session logs on at its next attempt.
      await d.setTls(material({ client, ca: gatewayCa }));
      await waitFor('the FIX session to log on', () => runtime.services.fix.runner(d.partnerId)?.session != null, 40_000);
      assert.equal(logons(d.executor).length, 1);
    });

    test("a gateway certificate that the partner's authorities do not vouch for is refused before cauri sends anything", async (t) => {
      // The public authorities Node.js trusts do not know the SGI's own.
      const d = await deployment(t, database, material({ client }));
      const runtime = await startRuntimeIn(t, d.env);
      let session = await failedWith(t, runtime, d.partnerId, /unable to verify the first certificate/);
      // An authority that signed something else.
      await d.setTls(material({ client, ca: rogueCa }));
      await waitFor(
        'another refusal',
        async () => ((await findSession(runtime.storage.db, d.partnerId))?.updated_at ?? 0) > (session?.updated_at ?? 0),
      );
      session = await failedWith(t, runtime, d.partnerId, /unable to verify the first certificate/);
      // Down: between attempts, or already trying the next one.
      assert.match(session?.state ?? '', /^(disconnected|connecting)$/);
      // cauri refused the gateway during the handshake, before presenting its own certificate.
      assert.doesNotMatch(d.executor.output(), /subject: \/CN=CAURI/);
      assert.equal(logons(d.executor).length, 0);
      assert.equal(session?.next_sender_seq, 1, 'no Logon was committed for sending');
    });
  });
}
