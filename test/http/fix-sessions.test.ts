import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { importPartners } from '../../src/partners/partner.service.js';
import { sessionViews } from '../../src/routing/fix/session-view.js';
import { apiClient } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';

type Json = Record<string, any>;

/** A gateway that takes connections and never answers: the session stays `connecting`, its Logon sent. */
async function silentGateway(t: { after(fn: () => void): void }): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

for (const database of DATABASES) {
  describe(`the FIX sessions for operators on ${database.name}`, () => {
    test('GET /v1/operator/fix-sessions shows what cauri partners sessions shows, to a client with operator:read only', async (t) => {
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'all' });
      const base = await listen(runtime);
      const port = await silentGateway(t);
      // One session whose Logon waits for an answer, one outside its daily window (an hour from now, for a minute).
      const later = (ms: number) => new Date(Date.now() + ms).toISOString().slice(11, 19);
      const fix = { host: '127.0.0.1', port, tls: false };
      const report = await runtime.storage.transact((trx) =>
        importPartners(
          trx,
          [
            {
              name: 'Silent Titres',
              jurisdiction: 'UEMOA',
              capabilities: ['equities'],
              connector: 'fix',
              fix: { ...fix, sender_comp_id: 'CAURI', target_comp_id: 'SILENT' },
            },
            {
              name: 'Closed Titres',
              jurisdiction: 'UEMOA',
              capabilities: ['equities'],
              connector: 'fix',
              fix: { ...fix, sender_comp_id: 'CAURI', target_comp_id: 'CLOSED', start_time: later(3_600_000), end_time: later(3_660_000) },
            },
          ],
          { now: new Date(), fixPlaintextAllowed: true },
        ),
      );
      const [silent, closed] = report.applied.map((a) => a.id);
      runtime.services.reference.invalidate();
      for (const id of [silent, closed]) runtime.services.connectors.get('fix', id as string);

      const operator = await apiClient(runtime, base, ['operator:read'], 'operations');
      const read = async () => (await (await operator.call('GET', '/v1/operator/fix-sessions')).json()) as { data: Json[] };
      let body = await read();
      const deadline = Date.now() + 15_000;
      while (
        !(
          body.data.find((s) => s.partner_id === silent)?.next_sender_seq === 2 &&
          body.data.find((s) => s.partner_id === closed)?.state === 'outside_window'
        ) &&
        Date.now() < deadline
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        body = await read();
      }
      const bySilent = body.data.find((s) => s.partner_id === silent);
      assert.equal(bySilent?.partner_name, 'Silent Titres');
      assert.equal(bySilent?.state, 'connecting');
      assert.equal(bySilent?.sender_comp_id, 'CAURI');
      assert.equal(bySilent?.target_comp_id, 'SILENT');
      assert.equal(bySilent?.next_sender_seq, 2, 'the Logon went out as 1');
      assert.equal(bySilent?.next_target_seq, 1);
      assert.match(bySilent?.last_sent_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(bySilent?.last_received_at, null);
      assert.equal(bySilent?.last_logon_at, null);
      assert.match(bySilent?.held_by ?? '', /^\d+-[0-9a-f]{8}$/, 'this process holds it');
      assert.equal(body.data.find((s) => s.partner_id === closed)?.state, 'outside_window');
      // The same rows as the command line reads.
      assert.deepEqual(body.data, await sessionViews(runtime.storage.db, Date.now()));

      // An integrator's client (every scope it may have by default) sees nothing of them.
      const integrator = await apiClient(runtime, base);
      const forbidden = await integrator.call('GET', '/v1/operator/fix-sessions');
      assert.equal(forbidden.status, 403);
      assert.deepEqual(await forbidden.json(), {
        code: 'forbidden',
        message: 'Missing scope: operator:read',
        request_id: forbidden.headers.get('x-request-id'),
      });
      const token = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: integrator.clientId,
          client_secret: integrator.clientSecret,
          scope: 'operator:read',
        }),
      });
      assert.equal(token.status, 422);
      assert.deepEqual(((await token.json()) as Json).details, [{ field: 'scope', rule: 'allowed_scope', value: 'operator:read' }]);
      assert.equal((await fetch(`${base}/v1/operator/fix-sessions`)).status, 401);
      const granted = (await (
        await fetch(`${base}/v1/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            grant_type: 'client_credentials',
            client_id: integrator.clientId,
            client_secret: integrator.clientSecret,
          }),
        })
      ).json()) as Json;
      assert.doesNotMatch(granted.scope, /operator/, 'never granted by default');
    });
  });
}
