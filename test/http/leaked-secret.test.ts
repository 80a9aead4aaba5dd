import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/lib/clock.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { runCli, spawnService } from '../support/process.js';

type Json = Record<string, any>;

/** The token endpoint and one protected read, over HTTP, for one client id. */
function endpoints(base: string, clientId: string) {
  const exchange = (secret: string) =>
    fetch(`${base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
    });
  return {
    exchange,
    async token(secret: string): Promise<string> {
      const res = await exchange(secret);
      assert.equal(res.status, 200, `token exchange: ${res.status}`);
      return ((await res.json()) as Json).access_token as string;
    },
    /** The status of a protected read: 404 (an unknown order) means the token is accepted. */
    async read(token: string): Promise<number> {
      const res = await fetch(`${base}/v1/orders/ord_01kdvdna00zzzzzzzzzzzzzzzz`, { headers: { authorization: `Bearer ${token}` } });
      await res.arrayBuffer();
      return res.status;
    },
  };
}

for (const database of DATABASES) {
  describe(`a leaked client secret on ${database.name}`, () => {
    test('disable ends every token; a rotation that expires the previous secret now ends it; after enabling, tokens from before stay refused', async (t) => {
      const clock = new ManualClock(new Date());
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' }, { clock });
      const base = await listen(runtime);
      const leaked = await runtime.services.clients.create('leaky');
      const api = endpoints(base, leaked.client_id);
      const attackerToken = await api.token(leaked.client_secret);
      assert.equal(await api.read(attackerToken), 404);

      await runtime.services.clients.setDisabled(leaked.client_id, true);
      assert.equal(await api.read(attackerToken), 401, 'disabling stops every token at once');
      assert.equal((await api.exchange(leaked.client_secret)).status, 401);
      const rotated = await runtime.services.clients.rotateSecret(leaked.client_id, 'now');
      assert.ok(rotated !== null);
      clock.advance(2000);
      await runtime.services.clients.setDisabled(leaked.client_id, false);

      const refused = await api.exchange(leaked.client_secret);
      assert.equal(refused.status, 401, 'the leaked secret gets no token, now rather than in 24 hours');
      assert.equal(((await refused.json()) as Json).error, 'invalid_client');
      const stale = await fetch(`${base}/v1/orders/ord_01kdvdna00zzzzzzzzzzzzzzzz`, {
        headers: { authorization: `Bearer ${attackerToken}` },
      });
      assert.equal(stale.status, 401, 'a token issued before the disabling stays refused after enabling');
      assert.match(((await stale.json()) as Json).message, /before the client was last disabled/);
      const fresh = await api.token(rotated.client_secret);
      assert.equal(await api.read(fresh), 404, 'the new secret works, and so do its tokens');
      clock.advance(60_000);
      assert.equal(await api.read(attackerToken), 401, 'still refused later (until it expires anyway)');
    });

    test('a client ends its own previous secret at once with expire_previous: now; its token keeps working', async (t) => {
      const clock = new ManualClock(new Date());
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' }, { clock });
      const base = await listen(runtime);
      const issued = await runtime.services.clients.create('self');
      const api = endpoints(base, issued.client_id);
      const token = await api.token(issued.client_secret);
      const rotate = (body: unknown) =>
        fetch(`${base}/v1/auth/rotate-secret`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const bad = await rotate({ expire_previous: 'tomorrow' });
      assert.equal(bad.status, 422);
      assert.deepEqual(
        ((await bad.json()) as Json).details.map((d: Json) => [d.field, d.rule]),
        [['expire_previous', 'enum']],
      );
      assert.equal((await api.exchange(issued.client_secret)).status, 200, 'nothing rotated');

      const res = await rotate({ expire_previous: 'now' });
      assert.equal(res.status, 200);
      const body = (await res.json()) as Json;
      assert.equal(body.previous_secret_expires_at, clock.now().toISOString());
      assert.equal((await api.exchange(issued.client_secret)).status, 401, 'the previous secret fails at once');
      assert.equal((await api.exchange(body.client_secret)).status, 200);
      assert.equal(await api.read(token), 404, 'tokens are bound to the client, not to the secret');
      const routine = (await (await rotate({ expire_previous: 'in_24_hours' })).json()) as Json;
      assert.equal(routine.previous_secret_expires_at, new Date(clock.now().getTime() + 24 * 3600_000).toISOString());
      assert.equal((await api.exchange(body.client_secret)).status, 200, 'a routine rotation keeps the overlap');
    });
  });
}

test('the leaked-secret procedure from the command line, against a running service', { timeout: 60_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-leak-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    CAURI_WORKERS: 'none',
    CAURI_SQLITE_SYNCHRONOUS: 'NORMAL',
  };
  const cli = async (...args: string[]) => {
    const result = await runCli(args, env);
    assert.equal(result.code, 0, `cauri ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const created = JSON.parse(await cli('clients', 'create', '--name', 'leaky', '--json')) as Json;
  const { base } = await spawnService(t, env);
  const api = endpoints(base, created.client_id);
  const before = await api.token(created.client_secret);

  await cli('clients', 'disable', created.client_id);
  assert.equal(await api.read(before), 401);
  const rotated = JSON.parse(await cli('clients', 'rotate-secret', created.client_id, '--expire-previous-now', '--json')) as Json;
  assert.ok(Date.parse(rotated.previous_secret_expires_at) <= Date.now());
  await cli('clients', 'enable', created.client_id);
  assert.equal((await api.exchange(created.client_secret)).status, 401, 'the old secret is refused at once');
  assert.equal(await api.read(before), 401, 'the token from before the disabling is refused');
  assert.equal(await api.read(await api.token(rotated.client_secret)), 404, 'the new secret works');

  // A routine rotation, then its overlap ended early.
  const next = JSON.parse(await cli('clients', 'rotate-secret', created.client_id, '--json')) as Json;
  assert.equal((await api.exchange(rotated.client_secret)).status, 200, 'inside the 24-hour overlap');
  assert.match(await cli('clients', 'expire-previous-secret', created.client_id), /1 previous secret stopped working now/);
  assert.equal((await api.exchange(rotated.client_secret)).status, 401);
  assert.equal((await api.exchange(next.client_secret)).status, 200);
  const unknown = await runCli(['clients', 'expire-previous-secret', 'cli_01kdvdna00zzzzzzzzzzzzzzzz'], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^cauri: no client cli_/);
});
