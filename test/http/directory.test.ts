import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';

function assertErrorBody(res: Response, body: any, status: number, code: string): void {
  assert.equal(res.status, status);
  assert.equal(body.code, code);
  assert.equal(typeof body.message, 'string');
  assert.match(body.request_id, /^req_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
  assert.equal(res.headers.get('x-request-id'), body.request_id);
}

for (const database of DATABASES) {
  describe(`public directory over HTTP on ${database.name}`, () => {
    test('pages through every approved partner with X-Cursor-Next', async (t) => {
      const base = await listen(await startRuntime(t, database));
      const seen: string[] = [];
      let url = `${base}/v1/sgi/partners?limit=4`;
      let pages = 0;
      for (;;) {
        const res = await fetch(url);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
        const body = (await res.json()) as { data: { id: string; name: string; jurisdiction: string; capabilities: string[] }[] };
        assert.ok(body.data.length <= 4);
        for (const p of body.data)
          assert.deepEqual(Object.keys(p).sort(), ['approved_since', 'capabilities', 'id', 'jurisdiction', 'name']);
        seen.push(...body.data.map((p) => p.id));
        pages++;
        const next = res.headers.get('x-cursor-next');
        assert.notEqual(next, null, 'X-Cursor-Next is always present');
        if (next === '') break;
        url = `${base}/v1/sgi/partners?limit=4&cursor=${encodeURIComponent(next ?? '')}`;
      }
      const approved = SANDBOX_PARTNERS.filter((p) => (p.status ?? 'approved') === 'approved').map((p) => p.id ?? '');
      assert.deepEqual(seen, [...approved].sort());
      assert.equal(pages, Math.ceil(approved.length / 4));

      const defaults = await fetch(`${base}/v1/sgi/partners`);
      assert.equal(((await defaults.json()) as { data: unknown[] }).data.length, approved.length, 'default limit 50 covers the seed');
      assert.equal(defaults.headers.get('x-cursor-next'), '');
    });

    test('filters, one partner, instruments', async (t) => {
      const base = await listen(await startRuntime(t, database));
      const res = await fetch(`${base}/v1/sgi/partners?jurisdiction=CEMAC&capability=bonds`);
      const body = (await res.json()) as { data: { id: string; jurisdiction: string; capabilities: string[] }[] };
      assert.ok(body.data.length > 0);
      for (const p of body.data) assert.ok(p.jurisdiction === 'CEMAC' && p.capabilities.includes('bonds'));
      const one = await fetch(`${base}/v1/sgi/partners/${body.data[0]?.id}`);
      assert.deepEqual(await one.json(), body.data[0]);

      const suspended = await fetch(`${base}/v1/instruments?status=suspended&limit=200`);
      const items = ((await suspended.json()) as { data: { code: string; status: string }[] }).data;
      assert.ok(items.length > 0 && items.every((i) => i.status === 'suspended'));
      const instrument = await fetch(`${base}/v1/instruments/KOLA.BRVM`);
      assert.deepEqual(await instrument.json(), {
        code: 'KOLA.BRVM',
        exchange: 'BRVM',
        class: 'equities',
        name: 'Kola Agro-Industries (synthetic)',
        currency: 'XOF',
        isin: null,
        lot_size: 1,
        tick_size_cents: 1,
        reference_price_cents: 1_550_000,
        price_band_bps: 750,
        status: 'active',
      });
      // The listed codes, each in its exchange's currency, with its trading rules.
      const listed = async (code: string) => (await (await fetch(`${base}/v1/instruments/${code}`)).json()) as Record<string, unknown>;
      assert.deepEqual(await listed('SNTS.BRVM'), {
        code: 'SNTS.BRVM',
        exchange: 'BRVM',
        class: 'equities',
        name: 'Sonatel',
        currency: 'XOF',
        isin: 'SN0000000019',
        lot_size: 1,
        tick_size_cents: 500,
        reference_price_cents: 2_550_000,
        price_band_bps: 750,
        status: 'active',
      });
      assert.deepEqual(
        (({ currency, tick_size_cents, price_band_bps }) => ({ currency, tick_size_cents, price_band_bps }))(
          await listed('SOCAPALM.BVMAC'),
        ),
        { currency: 'XAF', tick_size_cents: 500, price_band_bps: 1000 },
      );
      assert.deepEqual(
        (({ currency, tick_size_cents, price_band_bps }) => ({ currency, tick_size_cents, price_band_bps }))(await listed('MTNGH.GSE')),
        { currency: 'GHS', tick_size_cents: 1, price_band_bps: 1000 },
      );
      assert.equal((await listed('FCPEPA.BRVM')).price_band_bps, null, 'funds have no band');
      const bonds = (
        (await (await fetch(`${base}/v1/instruments?exchange=BRVM&class=bonds&limit=200`)).json()) as { data: { code: string }[] }
      ).data.map((b) => b.code);
      assert.ok(bonds.includes('TPCIO70.BRVM'), bonds.join());
      const gse = ((await (await fetch(`${base}/v1/instruments?exchange=GSE&limit=200`)).json()) as { data: { currency: string }[] }).data;
      assert.ok(gse.length > 10 && gse.every((i) => i.currency === 'GHS'));
    });

    test('bad input gets the error body with a precise detail', async (t) => {
      const base = await listen(await startRuntime(t, database));
      const cases: [string, number, string, { field: string; rule: string; value: unknown } | null][] = [
        ['/v1/sgi/partners?limit=0', 422, 'validation_error', { field: 'limit', rule: 'minimum', value: 0 }],
        ['/v1/sgi/partners?limit=201', 422, 'validation_error', { field: 'limit', rule: 'maximum', value: 201 }],
        ['/v1/sgi/partners?limit=abc', 422, 'validation_error', { field: 'limit', rule: 'type', value: 'abc' }],
        ['/v1/sgi/partners?jurisdiction=EUROPE', 422, 'validation_error', { field: 'jurisdiction', rule: 'enum', value: 'EUROPE' }],
        ['/v1/sgi/partners?capability=crypto', 422, 'validation_error', { field: 'capability', rule: 'enum', value: 'crypto' }],
        ['/v1/sgi/partners?colour=blue', 422, 'validation_error', { field: 'colour', rule: 'additionalProperties', value: 'blue' }],
        ['/v1/sgi/partners?cursor=not-ours', 422, 'validation_error', { field: 'cursor', rule: 'cursor', value: 'not-ours' }],
        ['/v1/instruments?exchange=NYSE', 422, 'validation_error', { field: 'exchange', rule: 'enum', value: 'NYSE' }],
        ['/v1/sgi/partners/sgi_01kdvdna00zzzzzzzzzzzzzzzz', 404, 'not_found', null],
        ['/v1/sgi/partners/banana', 404, 'not_found', null],
        ['/v1/instruments/NOPE.BRVM', 404, 'not_found', null],
        ['/v1/nothing/here', 404, 'not_found', null],
      ];
      for (const [path, status, code, detail] of cases) {
        const res = await fetch(`${base}${path}`);
        const body = (await res.json()) as any;
        assertErrorBody(res, body, status, code);
        if (detail !== null) {
          assert.equal(body.details.length, 1, path);
          const { message: _m, ...got } = body.details[0];
          assert.deepEqual(got, detail, path);
        }
      }
      // A cursor from another listing is not accepted either.
      const page = await fetch(`${base}/v1/instruments?limit=1`);
      const cursor = page.headers.get('x-cursor-next') ?? '';
      assert.notEqual(cursor, '');
      const res = await fetch(`${base}/v1/sgi/partners?cursor=${encodeURIComponent(cursor)}`);
      assertErrorBody(res, await res.json(), 422, 'validation_error');
      const other = await fetch(`${base}/v1/instruments?limit=1&exchange=GSE&cursor=${encodeURIComponent(cursor)}`);
      assertErrorBody(other, await other.json(), 422, 'validation_error');
    });

    test('health, readiness and metrics', async (t) => {
      const runtime = await startRuntime(t, database);
      const base = await listen(runtime);
      assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { status: 'ok' });
      await runtime.storage.transact(async () => undefined);
      assert.deepEqual(await (await fetch(`${base}/readyz`)).json(), { status: 'ready' });
      await fetch(`${base}/v1/sgi/partners?limit=0`);
      await fetch(`${base}/v1/sgi/partners?limit=0`, { method: 'HEAD' });
      const unknown = await fetch(`${base}/v1/no-such-thing/42`);
      assert.equal(unknown.status, 404);
      assert.ok(unknown.headers.has('x-ratelimit-limit'), 'an unknown API path is limited per client address');
      const text = await (await fetch(`${base}/metrics`)).text();
      assert.match(text, /cauri_http_requests_total\{method="HEAD",route="\/v1\/sgi\/partners",status="422"\} 1/);
      assert.match(text, /cauri_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
      assert.doesNotMatch(text, /no-such-thing/, 'unknown paths are not label values');
      assert.match(text, /cauri_http_requests_total\{method="GET",route="\/v1\/sgi\/partners",status="422"\} 1/);
      assert.match(text, /cauri_http_request_duration_seconds_bucket\{le="0.001",method="GET",route="\/v1\/sgi\/partners"\}/);
      assert.match(text, /cauri_db_pool_connections\{state="total"\} \d+/);
      assert.match(text, /cauri_events_pending_dispatch 0/);
      // The SQLite writer's busy time: the (empty) unit above took a BEGIN, a savepoint and a COMMIT.
      const writerSeconds = (phase: string) =>
        text.match(new RegExp(`cauri_db_writer_seconds_total\\{phase="${phase}"\\} ([0-9.e-]+)`))?.[1];
      // What the process sent to PostgreSQL, as its own counters have it.
      const wire = (body: string, kind: string) => body.match(new RegExp(`cauri_db_wire_total\\{kind="${kind}"\\} (\\d+)`))?.[1];
      if (database.name === 'sqlite') {
        assert.ok(Number(writerSeconds('work')) > 0, text);
        assert.ok(Number(writerSeconds('commit')) > 0, text);
        assert.equal(wire(text, 'statements'), undefined, 'SQLite sends nothing over a wire');
      } else {
        assert.equal(writerSeconds('work'), undefined, 'PostgreSQL has no single writer to report');
        const before = runtime.storage.wireStats();
        const scraped = await (await fetch(`${base}/metrics`)).text();
        const after = runtime.storage.wireStats();
        assert.ok(before !== null && after !== null);
        for (const [kind, field] of [
          ['statements', 'statements'],
          ['round_trips', 'roundTrips'],
          ['transactions', 'transactions'],
        ] as const) {
          const value = Number(wire(scraped, kind));
          assert.ok(value >= before[field] && value <= after[field] && value > 0, `${kind}: ${value}`);
        }
      }
    });
  });
}
