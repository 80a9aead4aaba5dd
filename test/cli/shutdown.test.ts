import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KYC2_REQUEST } from '../support/api.js';
import { runCli, spawnService } from '../support/process.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A GET on a new connection (no keep-alive): status, `Connection` header and body. */
async function getFresh(url: string): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('on SIGTERM the service stops being ready, keeps serving for the delay, lets a slow request finish, and exits 0', {
  timeout: 90_000,
}, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-shutdown-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    CAURI_SQLITE_SYNCHRONOUS: 'NORMAL',
    CAURI_SHUTDOWN_DELAY_SECONDS: '2',
  };
  const service = await spawnService(t, env);
  const created = await runCli(['clients', 'create', '--name', 'shutdown', '--scopes', 'kyc:write kyc:read', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const { client_id: clientId, client_secret: clientSecret } = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
  const tokenRes = await fetch(`${service.base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  const { access_token: token } = (await tokenRes.json()) as { access_token: string };
  assert.equal((await getFresh(`${service.base}/readyz`)).status, 200);

  // A slow request: its headers and half its body now, the rest after the listener has closed.
  const body = Buffer.from(JSON.stringify({ ...KYC2_REQUEST, subject_id: 'slow-client-1' }));
  let slow: ReturnType<typeof httpRequest> | undefined;
  const answered = new Promise<{ res: IncomingMessage; text: string }>((resolve, reject) => {
    const req = httpRequest(
      `${service.base}/v1/kyc/attestations`,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'idempotency-key': randomUUID(),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ res, text }));
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, 40));
    slow = req;
  });
  await pause(300);

  process.kill(service.pid, 'SIGTERM');
  await pause(300);
  // During the delay: not ready, every answer asks for the connection to close, and requests are still served.
  const readiness = await getFresh(`${service.base}/readyz`);
  assert.equal(readiness.status, 503);
  assert.deepEqual(JSON.parse(readiness.body), { status: 'unavailable', reason: 'shutting down' });
  assert.equal(readiness.connection, 'close');
  const health = await getFresh(`${service.base}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(health.connection, 'close');

  // After the delay: no new connection is accepted, while the slow request is still in flight.
  await pause(2500);
  await assert.rejects(getFresh(`${service.base}/healthz`), /ECONNREFUSED/);
  assert.equal(
    await Promise.race([service.exited().then(() => 'exited'), pause(200).then(() => 'running')]),
    'running',
    'the process waits for the request',
  );

  slow?.end(body.subarray(40));
  const { res, text } = await answered;
  assert.equal(res.statusCode, 201, text);
  assert.equal((JSON.parse(text) as { subject_id: string }).subject_id, 'slow-client-1');
  assert.deepEqual(await service.exited(), { code: 0, signal: null });
  assert.match(service.output(), /"signal":"SIGTERM","drain_ms":2000,"msg":"shutting down"/);
});
