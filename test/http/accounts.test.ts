import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient, type ApiClient } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { orderContext, sandboxPartner, type Json } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');
const LAGUNE = sandboxPartner('lagune');
const SAHEL = sandboxPartner('sahel');
const PENDING = sandboxPartner('fleuve');
const SUSPENDED = sandboxPartner('ogooue');

const path = (subject: string, partner?: string) =>
  `/v1/subjects/${encodeURIComponent(subject)}/accounts${partner === undefined ? '' : `/${encodeURIComponent(partner)}`}`;

async function call(
  api: ApiClient,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await api.call(method, url, body);
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Json), headers: res.headers };
}

const pairs = (body: Json) => (body.details as Json[]).map((d) => [d.field, d.rule]);

for (const database of DATABASES) {
  describe(`investor accounts on ${database.name}`, () => {
    test('register, read, list, change, remove: 201, then 200, updated_at only when the number changes, 204 then 404', async (t) => {
      const c = await orderContext(t, database);
      const first = await call(c.api, 'PUT', path('inv:0001.a', BAOBAB), { account_number: 'CI-0042 7781' });
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.deepEqual(first.body, {
        subject_id: 'inv:0001.a',
        partner_id: BAOBAB,
        account_number: 'CI-0042 7781',
        created_at: '2026-11-23T10:00:00.000Z',
        updated_at: '2026-11-23T10:00:00.000Z',
      });
      assert.deepEqual((await call(c.api, 'GET', path('inv:0001.a', BAOBAB))).body, first.body);

      c.clock.advance(60_000);
      const same = await call(c.api, 'PUT', path('inv:0001.a', BAOBAB), { account_number: 'CI-0042 7781' });
      assert.equal(same.status, 200);
      assert.deepEqual(same.body, first.body, 'the same number again changes nothing');

      const changed = await call(c.api, 'PUT', path('inv:0001.a', BAOBAB), { account_number: 'CI-0099' });
      assert.equal(changed.status, 200);
      assert.deepEqual(changed.body, { ...first.body, account_number: 'CI-0099', updated_at: '2026-11-23T10:01:00.000Z' });
      assert.deepEqual((await call(c.api, 'GET', path('inv:0001.a', BAOBAB))).body, changed.body);

      await call(c.api, 'PUT', path('inv:0001.a', LAGUNE), { account_number: 'LCB/77' });
      await call(c.api, 'PUT', path('inv-0002', LAGUNE), { account_number: 'other subject' });
      const list = await call(c.api, 'GET', path('inv:0001.a'));
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.data.map((a: Json) => [a.partner_id, a.account_number]),
        [
          [BAOBAB, 'CI-0099'],
          [LAGUNE, 'LCB/77'],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      assert.equal(list.headers.get('x-cursor-next'), '');
      assert.deepEqual((await call(c.api, 'GET', path('nobody'))).body, { data: [] }, 'a subject without accounts has an empty list');

      const removed = await c.api.call('DELETE', path('inv:0001.a', BAOBAB));
      assert.equal(removed.status, 204);
      assert.equal(await removed.text(), '');
      const gone = await call(c.api, 'GET', path('inv:0001.a', BAOBAB));
      assert.equal(gone.status, 404);
      assert.equal(gone.body.code, 'not_found');
      assert.equal((await call(c.api, 'DELETE', path('inv:0001.a', BAOBAB))).status, 404, 'removing twice: nothing to remove');
      assert.deepEqual(
        (await call(c.api, 'GET', path('inv:0001.a'))).body.data.map((a: Json) => a.partner_id),
        [LAGUNE],
      );

      // Registered again after removal: a new registration.
      c.clock.advance(60_000);
      const again = await call(c.api, 'PUT', path('inv:0001.a', BAOBAB), { account_number: 'CI-0100' });
      assert.equal(again.status, 201);
      assert.equal(again.body.created_at, '2026-11-23T10:02:00.000Z');
    });

    test('concurrent registrations of one account: exactly one creates it, the others replace it, one row remains', async (t) => {
      const c = await orderContext(t, database);
      const numbers = Array.from({ length: 8 }, (_, i) => `RACE-${i}`);
      const answers = await Promise.all(numbers.map((n) => call(c.api, 'PUT', path('inv-race', BAOBAB), { account_number: n })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
      const rows = await c.runtime.storage.db.selectFrom('investor_accounts').select(['subject_id', 'account_number']).execute();
      assert.equal(rows.length, 1);
      assert.ok(numbers.includes(rows[0]?.account_number ?? ''));
      assert.equal((await call(c.api, 'GET', path('inv-race', BAOBAB))).body.account_number, rows[0]?.account_number);
    });

    test('a client sees only its own accounts: another client reads, lists and removes nothing, and registers its own apart', async (t) => {
      const c = await orderContext(t, database);
      const other = await apiClient(c.runtime, c.base, undefined, 'another client');
      assert.equal((await call(c.api, 'PUT', path('inv-1', BAOBAB), { account_number: 'MINE-1' })).status, 201);

      assert.equal((await call(other, 'GET', path('inv-1', BAOBAB))).status, 404);
      assert.deepEqual((await call(other, 'GET', path('inv-1'))).body, { data: [] });
      assert.equal((await call(other, 'DELETE', path('inv-1', BAOBAB))).status, 404);
      const theirs = await call(other, 'PUT', path('inv-1', BAOBAB), { account_number: 'THEIRS-1' });
      assert.equal(theirs.status, 201, 'the same subject id of another client is another investor');

      assert.equal((await call(c.api, 'GET', path('inv-1', BAOBAB))).body.account_number, 'MINE-1');
      assert.equal((await call(other, 'GET', path('inv-1', BAOBAB))).body.account_number, 'THEIRS-1');
      assert.equal((await call(other, 'DELETE', path('inv-1', BAOBAB))).status, 204);
      assert.equal((await call(c.api, 'GET', path('inv-1', BAOBAB))).body.account_number, 'MINE-1');
    });

    test('refusals store nothing: account numbers a FIX tag cannot carry, bad subject ids, unknown and unlisted partners, scopes', async (t) => {
      const c = await orderContext(t, database);
      const bad: [unknown, [string, string][]][] = [
        [
          { account_number: '' },
          [
            ['account_number', 'minLength'],
            ['account_number', 'pattern'],
          ],
        ],
        [
          { account_number: 'A'.repeat(33) },
          [
            ['account_number', 'maxLength'],
            ['account_number', 'pattern'],
          ],
        ],
        [{ account_number: 'CI|0042' }, [['account_number', 'pattern']]],
        [{ account_number: '1=CI0042' }, [['account_number', 'pattern']]],
        [{ account_number: 'CI\u00010042' }, [['account_number', 'pattern']]],
        [{ account_number: 'CI\t0042' }, [['account_number', 'pattern']]],
        [{ account_number: ' CI0042' }, [['account_number', 'pattern']]],
        [{ account_number: 'CI0042 ' }, [['account_number', 'pattern']]],
        [{ account_number: 'CIé0042' }, [['account_number', 'pattern']]],
        [{ account_number: 42 }, [['account_number', 'type']]],
        [{ account_number: 'CI0042', partner: 'x' }, [['partner', 'additionalProperties']]],
        [{}, [['account_number', 'required']]],
      ];
      for (const [body, expected] of bad) {
        const res = await call(c.api, 'PUT', path('inv-1', BAOBAB), body);
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(res.body.code, 'validation_error');
        assert.deepEqual(pairs(res.body), expected, JSON.stringify(body));
      }
      const noBody = await call(c.api, 'PUT', path('inv-1', BAOBAB));
      assert.deepEqual([noBody.status, pairs(noBody.body)], [422, [['body', 'required']]]);
      const pipe = await call(c.api, 'PUT', path('inv-1', BAOBAB), { account_number: 'CI|0042' });
      assert.equal(pipe.body.details[0].value, 'CI|0042', 'the detail shows the offending value');

      // 32 characters, with inner spaces and the other punctuation, are accepted.
      const longest = 'A b-C.d/E_f:G#h@I+j(K)l*M,n;O!p~';
      assert.equal(longest.length, 32);
      assert.equal((await call(c.api, 'PUT', path('inv-ok', BAOBAB), { account_number: longest })).status, 201);

      for (const subject of ['a'.repeat(129), 'inv 1', 'inv/1', 'inv%1', 'é']) {
        for (const [method, url, body] of [
          ['PUT', path(subject, BAOBAB), { account_number: 'CI0042' }],
          ['GET', path(subject, BAOBAB)],
          ['GET', path(subject)],
          ['DELETE', path(subject, BAOBAB)],
        ] as const) {
          const res = await call(c.api, method, url, body);
          assert.equal(res.status, 422, `${method} ${url}`);
          assert.deepEqual(pairs(res.body), [['subject_id', 'pattern']], `${method} ${url}`);
        }
      }

      for (const partner of ['sgi_00000000000000000000000000', 'not-an-id', PENDING, SUSPENDED]) {
        const res = await call(c.api, 'PUT', path('inv-1', partner), { account_number: 'CI0042' });
        assert.equal(res.status, 404, partner);
        assert.equal(res.body.code, 'not_found');
        assert.equal((await call(c.api, 'GET', path('inv-1', partner))).status, 404);
      }

      const reader = await apiClient(c.runtime, c.base, ['orders:read'], 'read-only client');
      const forbidden = await call(reader, 'PUT', path('inv-1', BAOBAB), { account_number: 'CI0042' });
      assert.deepEqual([forbidden.status, forbidden.body.code, forbidden.body.message], [403, 'forbidden', 'Missing scope: orders:write']);
      assert.equal((await call(reader, 'DELETE', path('inv-ok', BAOBAB))).status, 403);
      const writer = await apiClient(c.runtime, c.base, ['orders:write'], 'write-only client');
      assert.equal((await call(writer, 'GET', path('inv-ok'))).status, 403);

      const stored = await c.runtime.storage.db.selectFrom('investor_accounts').select(['subject_id', 'account_number']).execute();
      assert.deepEqual(stored, [{ subject_id: 'inv-ok', account_number: longest }], 'only the valid registration was stored');
    });

    test('the list pages by partner id with X-Cursor-Next; a cursor of another subject is refused', async (t) => {
      const c = await orderContext(t, database);
      const partners = [BAOBAB, LAGUNE, SAHEL].sort();
      for (const [i, p] of partners.entries()) await call(c.api, 'PUT', path('inv-1', p), { account_number: `ACC-${i}` });
      await call(c.api, 'PUT', path('inv-2', BAOBAB), { account_number: 'ACC-X' });

      const first = await call(c.api, 'GET', `${path('inv-1')}?limit=2`);
      assert.deepEqual(
        first.body.data.map((a: Json) => a.partner_id),
        partners.slice(0, 2),
      );
      const cursor = first.headers.get('x-cursor-next') ?? '';
      assert.notEqual(cursor, '');
      const second = await call(c.api, 'GET', `${path('inv-1')}?limit=2&cursor=${encodeURIComponent(cursor)}`);
      assert.deepEqual(
        second.body.data.map((a: Json) => a.partner_id),
        partners.slice(2),
      );
      assert.equal(second.headers.get('x-cursor-next'), '');

      const elsewhere = await call(c.api, 'GET', `${path('inv-2')}?limit=2&cursor=${encodeURIComponent(cursor)}`);
      assert.deepEqual([elsewhere.status, pairs(elsewhere.body)], [422, [['cursor', 'cursor']]]);
      const forged = await call(c.api, 'GET', `${path('inv-1')}?cursor=abc.def`);
      assert.deepEqual([forged.status, pairs(forged.body)], [422, [['cursor', 'cursor']]]);
      const tooMany = await call(c.api, 'GET', `${path('inv-1')}?limit=201`);
      assert.deepEqual([tooMany.status, pairs(tooMany.body)], [422, [['limit', 'maximum']]]);
    });
  });
}
