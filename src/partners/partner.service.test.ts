import { parsePartnerChecks } from './core/checks.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { listPartners } from './partner.repository.js';
import { importInstruments, listCatalogue } from './instrument.service.js';
import { getDirectoryPartner, importPartners, listDirectory } from './partner.service.js';
import { SANDBOX_INSTRUMENTS, SANDBOX_PARTNERS, seedSandboxDirectory } from './sandbox-seed.js';
import { ApiError } from '../lib/errors.js';
import { ManualClock } from '../lib/clock.js';
import { ReferenceData } from './reference-data.js';

const now = new Date('2026-11-22T10:00:00.000Z');

for (const database of DATABASES) {
  describe(`partner directory on ${database.name}`, () => {
    test('the sandbox seed has at least 8 approved partners in every jurisdiction and 30 instruments on every exchange', async (t) => {
      const { db, dialect } = await openTestStorage(t, database);
      assert.equal(await seedSandboxDirectory(db, dialect, now), true);
      assert.equal(await seedSandboxDirectory(db, dialect, now), false, 'seeds only once');
      const approved = await listPartners(db, { afterId: null, limit: 1000, approvedOnly: true });
      assert.ok(approved.length >= 8);
      assert.deepEqual(new Set(approved.map((p) => p.jurisdiction)), new Set(['UEMOA', 'CEMAC', 'GHANA']));
      const all = await listPartners(db, { afterId: null, limit: 1000, approvedOnly: false });
      assert.equal(all.length, SANDBOX_PARTNERS.length);
      const catalogue = await listCatalogue(db, { afterCode: null, limit: 200 });
      assert.ok(catalogue.items.length >= 30);
      assert.deepEqual(new Set(catalogue.items.map((i) => i.exchange)), new Set(['BRVM', 'BVMAC', 'GSE']));
      assert.ok(catalogue.items.some((i) => i.status === 'suspended'));
      assert.equal(catalogue.items.length, SANDBOX_INSTRUMENTS.length);

      // A directory seeded by an older version gets the instruments it lacks, and keeps its own.
      await db.deleteFrom('instruments').where('code', '=', 'SNTS.BRVM').execute();
      await db.updateTable('instruments').set({ reference_price_cents: 1_000 }).where('code', '=', 'KOLA.BRVM').execute();
      assert.equal(await seedSandboxDirectory(db, dialect, now), true);
      assert.equal((await listCatalogue(db, { afterCode: null, limit: 200 })).items.length, SANDBOX_INSTRUMENTS.length);
      const kola = await db
        .selectFrom('instruments')
        .select('reference_price_cents')
        .where('code', '=', 'KOLA.BRVM')
        .executeTakeFirstOrThrow();
      assert.equal(kola.reference_price_cents, 1_000, 'an existing instrument is not changed');
      assert.equal(await seedSandboxDirectory(db, dialect, now), false);
    });

    test('listing pages by id with filters and never shows unapproved partners', async (t) => {
      const { db, dialect } = await openTestStorage(t, database);
      await seedSandboxDirectory(db, dialect, now);
      const seen: string[] = [];
      let after: string | null = null;
      do {
        const page = await listDirectory(db, { afterId: after, limit: 3 });
        seen.push(...page.items.map((p) => p.id));
        after = page.nextAfter;
      } while (after !== null);
      assert.deepEqual(seen, [...seen].sort());
      const approvedIds = SANDBOX_PARTNERS.filter((p) => (p.status ?? 'approved') === 'approved').map((p) => p.id);
      assert.deepEqual(new Set(seen), new Set(approvedIds));

      const ghanaBonds = await listDirectory(db, { afterId: null, limit: 50, jurisdiction: 'GHANA', capability: 'bonds' });
      assert.ok(ghanaBonds.items.length >= 1);
      for (const p of ghanaBonds.items) {
        assert.equal(p.jurisdiction, 'GHANA');
        assert.ok(p.capabilities.includes('bonds'));
      }
      const pending = SANDBOX_PARTNERS.find((p) => p.status === 'pending');
      await assert.rejects(getDirectoryPartner(db, pending?.id ?? ''), (e: unknown) => e instanceof ApiError && e.code === 'not_found');
    });

    test('an import with a bad row writes nothing; with allowPartial it writes the good rows', async (t) => {
      const { db } = await openTestStorage(t, database);
      const rows = [
        { name: 'Alpha Titres', jurisdiction: 'UEMOA', capabilities: ['equities'] },
        { name: 'Beta Titres', jurisdiction: 'MARS', capabilities: ['equities'] },
        { name: 'Gamma Titres', jurisdiction: 'CEMAC', capabilities: ['bonds'], extra: 1 },
      ];
      const strict = await db.transaction().execute((trx) => importPartners(trx, rows, { now }));
      assert.equal(strict.committed, false);
      assert.deepEqual(
        strict.rejected.map((r) => r.index),
        [1, 2],
      );
      assert.deepEqual(
        strict.rejected[0]?.details.map((d) => [d.field, d.rule, d.value]),
        [['jurisdiction', 'enum', 'MARS']],
      );
      assert.ok(strict.rejected[1]?.details.some((d) => d.field === 'extra' && d.rule === 'additionalProperties'));
      assert.equal((await listPartners(db, { afterId: null, limit: 10, approvedOnly: false })).length, 0, 'nothing written');

      const partial = await db.transaction().execute((trx) => importPartners(trx, rows, { now, allowPartial: true }));
      assert.equal(partial.committed, true);
      assert.deepEqual(
        partial.applied.map((a) => [a.index, a.action]),
        [[0, 'created']],
      );

      // Re-importing by name updates the same partner rather than creating a second one.
      const again = await db.transaction().execute((trx) =>
        importPartners(trx, [{ name: 'Alpha Titres', jurisdiction: 'UEMOA', capabilities: ['equities', 'bonds'], status: 'suspended' }], {
          now,
        }),
      );
      assert.equal(again.applied[0]?.action, 'updated');
      assert.equal(again.applied[0]?.id, partial.applied[0]?.id);
      const stored = await listPartners(db, { afterId: null, limit: 10, approvedOnly: false });
      assert.equal(stored.length, 1);
      assert.equal(stored[0]?.status, 'suspended');
      assert.deepEqual(JSON.parse(stored[0]?.capabilities ?? '[]'), ['equities', 'bonds']);
    });

    test('a FIX partner: its fix member is stored with defaults, kept on re-import, and refused when malformed naming the member', async (t) => {
      const { db } = await openTestStorage(t, database);
      const fix = { host: 'fix.sgi.example', port: 9876, sender_comp_id: 'CAURI', target_comp_id: 'SGI1' };
      const row = { name: 'Fix Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix };
      const created = await db.transaction().execute((trx) => importPartners(trx, [row], { now }));
      assert.equal(created.committed, true);
      const id = created.applied[0]?.id ?? '';
      const stored = (await listPartners(db, { afterId: null, limit: 10, approvedOnly: false }))[0];
      assert.equal(stored?.connector, 'fix');
      assert.deepEqual(JSON.parse(stored?.fix ?? 'null'), {
        ...fix,
        heartbeat_s: 30,
        tls: true,
        account: null,
        start_time: null,
        end_time: null,
      });
      assert.equal(stored?.fix_credentials, null);

      // Re-imported without the member: the settings stay.
      const { fix: _fix, ...withoutFix } = row;
      await db.transaction().execute((trx) => importPartners(trx, [{ ...withoutFix, id }], { now }));
      assert.equal((await listPartners(db, { afterId: null, limit: 10, approvedOnly: false }))[0]?.fix, stored?.fix);

      const refused = async (bad: Record<string, unknown>, options: { fixPlaintextAllowed?: boolean } = {}) => {
        const report = await db.transaction().execute((trx) => importPartners(trx, [bad], { now, ...options }));
        assert.equal(report.committed, false);
        return report.rejected[0]?.details.map((d) => [d.field, d.rule]);
      };
      const other = { name: 'Other Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix' };
      assert.deepEqual(await refused({ ...other, fix: { ...fix, port: 0 } }), [['fix.port', 'minimum']]);
      assert.deepEqual(await refused({ ...other, fix: { ...fix, password: 'x' } }), [['fix.password', 'additionalProperties']]);
      assert.deepEqual(await refused({ ...other, fix: { ...fix, sender_comp_id: 'has space' } }), [['fix.sender_comp_id', 'pattern']]);
      assert.deepEqual(await refused({ ...other, fix: { ...fix, start_time: '25:00:00', end_time: '15:00:00' } }), [
        ['fix.start_time', 'pattern'],
      ]);
      assert.deepEqual(await refused({ ...other, fix: { ...fix, start_time: '08:00:00' } }), [['fix.end_time', 'required']]);
      assert.deepEqual(await refused({ ...other, fix: { ...fix, start_time: '08:00:00', end_time: '08:00:00' } }), [
        ['fix.end_time', 'session_window'],
      ]);
      assert.deepEqual(await refused({ ...other, fix: { ...fix, tls: false } }), [['fix.tls', 'tls']]);
      assert.deepEqual(await refused({ ...other, connector: 'sandbox', fix }), [['fix', 'connector']]);
      assert.deepEqual(await refused(other), [['fix', 'required']]);
      const plaintext = await db.transaction().execute((trx) =>
        importPartners(trx, [{ ...other, fix: { ...fix, tls: false, account: 'ACC-9', start_time: '08:00:00', end_time: '15:30:00' } }], {
          now,
          fixPlaintextAllowed: true,
        }),
      );
      assert.equal(plaintext.committed, true);
    });

    test('checks: stored when given, kept on a re-import without them, cleared by {}, refused when unknown; the reference data tells which partners require an account', async (t) => {
      const { db } = await openTestStorage(t, database);
      const fix = { host: 'fix.sgi.example', port: 9876, sender_comp_id: 'CAURI', target_comp_id: 'SGI1' };
      const rows = [
        { name: 'Comptes Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], checks: { accounts: true } },
        { name: 'Sans Comptes', jurisdiction: 'UEMOA', capabilities: ['equities'], checks: { accounts: false } },
        { name: 'Fix Sans Defaut', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix },
        {
          name: 'Fix Avec Defaut',
          jurisdiction: 'UEMOA',
          capabilities: ['equities'],
          connector: 'fix',
          fix: { ...fix, account: 'OMNIBUS' },
          checks: { accounts: true },
        },
      ];
      const created = await db.transaction().execute((trx) => importPartners(trx, rows, { now }));
      assert.equal(created.committed, true, JSON.stringify(created.rejected));
      const ids = created.applied.map((a) => a.id);
      const stored = async () =>
        new Map((await listPartners(db, { afterId: null, limit: 10, approvedOnly: false })).map((p) => [p.name, p.checks]));
      assert.deepEqual(
        await stored(),
        new Map([
          ['Comptes Titres', '{"accounts":true}'],
          ['Sans Comptes', null],
          ['Fix Sans Defaut', null],
          ['Fix Avec Defaut', '{"accounts":true}'],
        ]),
      );

      const rules = async () => {
        const snapshot = await new ReferenceData(db, new ManualClock(now), { refreshMs: 60_000 }).current();
        return ids.map((id) => snapshot.partner(id)?.account);
      };
      // Being reached over FIX requires no account: only the checks do.
      assert.deepEqual(await rules(), [
        { required: true, fallback: null },
        { required: false, fallback: null },
        { required: false, fallback: null },
        { required: true, fallback: 'OMNIBUS' },
      ]);

      // Left out: kept. Given as {}: nothing more is required.
      const { checks: _checks, ...withoutChecks } = rows[0] as Record<string, unknown>;
      await db.transaction().execute((trx) => importPartners(trx, [{ ...withoutChecks, id: ids[0] }], { now }));
      assert.equal((await stored()).get('Comptes Titres'), '{"accounts":true}');
      await db.transaction().execute((trx) => importPartners(trx, [{ ...withoutChecks, id: ids[0], checks: {} }], { now }));
      assert.equal((await stored()).get('Comptes Titres'), null);
      assert.deepEqual((await rules())[0], { required: false, fallback: null });

      const refused = await db
        .transaction()
        .execute((trx) => importPartners(trx, [{ ...withoutChecks, checks: { accounts: 'yes', funds: true } }], { now }));
      assert.equal(refused.committed, false);
      assert.deepEqual(
        refused.rejected[0]?.details.map((d) => [d.field, d.rule]),
        [
          ['checks.funds', 'additionalProperties'],
          ['checks.accounts', 'type'],
        ],
      );
    });

    test('instrument import derives the exchange from the code and rejects bad codes', async (t) => {
      const { db } = await openTestStorage(t, database);
      const report = await db.transaction().execute((trx) =>
        importInstruments(
          trx,
          [
            { code: 'ABC.BRVM', class: 'equities', name: 'Abc', reference_price_cents: 1000 },
            { code: 'sonatel', class: 'equities', name: 'Lower', reference_price_cents: 1000 },
            { code: 'XYZ.NYSE', class: 'equities', name: 'Elsewhere', reference_price_cents: 1000 },
            { code: 'ABC.BRVM', class: 'bonds', name: 'Twice', reference_price_cents: 0 },
          ],
          { now, allowPartial: true },
        ),
      );
      assert.deepEqual(
        report.applied.map((a) => a.id),
        ['ABC.BRVM'],
      );
      assert.deepEqual(
        report.rejected.map((r) => [r.index, r.details[0]?.field, r.details[0]?.rule]),
        [
          [1, 'code', 'pattern'],
          [2, 'code', 'pattern'],
          [3, 'reference_price_cents', 'minimum'],
        ],
      );
      const page = await listCatalogue(db, { afterCode: null, limit: 10 });
      assert.deepEqual(page.items, [
        {
          code: 'ABC.BRVM',
          exchange: 'BRVM',
          class: 'equities',
          name: 'Abc',
          currency: 'XOF',
          isin: null,
          lot_size: 1,
          tick_size_cents: 1,
          reference_price_cents: 1000,
          price_band_bps: 750,
          status: 'active',
        },
      ]);
    });

    test('checks in the import file: stored as given, kept by a later import without them, unknown checks refused', async (t) => {
      const { db } = await openTestStorage(t, database);
      const row = { name: 'Checked', jurisdiction: 'UEMOA', capabilities: ['equities'] };
      const run = (rows: unknown[]) => db.transaction().execute((trx) => importPartners(trx, rows, { now }));
      const first = await run([{ ...row, checks: { holdings: true } }]);
      assert.equal(first.committed, true, JSON.stringify(first.rejected));
      const checksOf = async () =>
        (await db.selectFrom('partners').select('checks').where('name', '=', 'Checked').executeTakeFirstOrThrow()).checks;
      assert.deepEqual(parsePartnerChecks(await checksOf()), { accounts: false, holdings: true });
      assert.equal((await run([{ ...row, capabilities: ['equities', 'bonds'] }])).committed, true);
      assert.deepEqual(parsePartnerChecks(await checksOf()), { accounts: false, holdings: true }, 'kept when the row leaves them out');
      assert.equal((await run([{ ...row, checks: {} }])).committed, true);
      assert.equal(await checksOf(), null, 'an empty object asks for none');
      const bad = await run([{ ...row, checks: { holdings: 'yes', funds: true } }]);
      assert.equal(bad.committed, false);
      assert.deepEqual(bad.rejected[0]?.details.map((d) => [d.field, d.rule]).sort(), [
        ['checks.funds', 'additionalProperties'],
        ['checks.holdings', 'type'],
      ]);
      const karite = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Karite'));
      assert.deepEqual(karite?.checks, { holdings: true }, 'the sandbox partner that asks for the holdings check');
    });
  });
}
