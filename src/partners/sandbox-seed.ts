import type { Kysely } from 'kysely';
import { deterministicId } from '../lib/ids.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { countPartners } from './partner.repository.js';
import { importInstruments } from './instrument.service.js';
import { LISTED_INSTRUMENTS } from './sandbox-catalogue.js';
import { importPartners } from './partner.service.js';
import type { InstrumentImportRow, PartnerImportRow } from './partner.schemas.js';
import { insertScheduleIfAbsent, listSchedules } from './fee-schedule.repository.js';
import { partnerFeeRows } from './fee-schedule.service.js';

/**
 * Reference data for sandbox deployments. The partners are invented (no real firm); their ids are
 * fixed so that docs/sandbox.md can list them. The catalogue has the exchanges' real listed codes
 * (sandbox-catalogue.ts) and synthetic instruments, invented, which carry the documented test values.
 */
const SEEDED_AT = Date.UTC(2026, 0, 1);
const partner = (label: string, row: Omit<PartnerImportRow, 'id'>): PartnerImportRow => ({
  id: deterministicId('partner', SEEDED_AT, label),
  ...row,
});

/**
 * A sandbox partner's commission schedule: invented firms, with tariffs in the range the region's
 * brokers publish. UEMOA SGIs commonly charge 0.6 to 1.5 % a side with a minimum per order; a CEMAC
 * Société de Bourse at most 0.5 % (COSUMAF's 2024 grid); Ghanaian brokers negotiate 1 to 2.5 %.
 * Amounts in francs CFA are rounded to the franc (100 cents), cedi amounts to the pesewa.
 */
const tariff = (
  currency: 'XOF' | 'XAF' | 'GHS',
  rate_bps: number,
  minimumUnits: number,
  byClass: Partial<Record<'bonds' | 'money_market' | 'opcvm', [number, number]>> = {},
): NonNullable<PartnerImportRow['fees']> => {
  const increment_cents = currency === 'GHS' ? 1 : 100;
  const commission = (rate: number, minimum: number) => ({
    rate_bps: rate,
    minimum_cents: minimum * 100,
    rounding: { mode: 'half_up' as const, increment_cents },
  });
  const classes = Object.entries(byClass);
  return [
    {
      effective_from: '2026-01-01',
      source: `Sandbox: an invented ${currency === 'GHS' ? "broker's" : currency === 'XAF' ? "Société de Bourse's" : "SGI's"} tariff, in the range the region's brokers publish (docs/sandbox.md).`,
      commission: commission(rate_bps, minimumUnits),
      ...(classes.length === 0
        ? {}
        : { by_class: Object.fromEntries(classes.map(([cls, [rate, minimum]]) => [cls, commission(rate, minimum)])) }),
    },
  ];
};

export const SANDBOX_PARTNERS: readonly PartnerImportRow[] = [
  partner('baobab', {
    name: 'Baobab Titres (sandbox)',
    jurisdiction: 'UEMOA',
    capabilities: ['equities', 'bonds', 'opcvm'],
    approved_since: '2019-03-01',
    fees: tariff('XOF', 100, 2_500, { bonds: [50, 2_500] }),
  }),
  partner('lagune', {
    name: 'Lagune Capital Bourse (sandbox)',
    jurisdiction: 'UEMOA',
    capabilities: ['equities', 'bonds', 'money_market', 'junior_board'],
    approved_since: '2020-06-15',
    fees: tariff('XOF', 80, 5_000, { bonds: [40, 5_000], money_market: [20, 5_000] }),
  }),
  partner('sahel', {
    name: 'Sahel Horizon Valeurs (sandbox)',
    jurisdiction: 'UEMOA',
    capabilities: ['bonds', 'money_market'],
    approved_since: '2021-01-10',
    fees: tariff('XOF', 40, 10_000),
  }),
  // Karite asks for the holdings check: a sell beyond the subject's position there is refused.
  partner('karite', {
    name: 'Karite Securities (sandbox)',
    jurisdiction: 'UEMOA',
    capabilities: ['equities', 'reit', 'opcvm'],
    approved_since: '2022-09-05',
    checks: { holdings: true },
    fees: tariff('XOF', 120, 1_000),
  }),
  partner('sanaga', {
    name: 'Sanaga Titres Centrale (sandbox)',
    jurisdiction: 'CEMAC',
    capabilities: ['equities', 'bonds'],
    approved_since: '2020-02-20',
    fees: tariff('XAF', 50, 5_000, { bonds: [30, 5_000] }),
  }),
  partner('ebene', {
    name: 'Ebene Bourse Afrique Centrale (sandbox)',
    jurisdiction: 'CEMAC',
    capabilities: ['bonds', 'money_market', 'opcvm'],
    approved_since: '2023-04-01',
    fees: tariff('XAF', 30, 5_000),
  }),
  partner('volta', {
    name: 'Volta Lake Brokerage (sandbox)',
    jurisdiction: 'GHANA',
    capabilities: ['equities', 'bonds', 'junior_board'],
    approved_since: '2018-11-30',
    fees: tariff('GHS', 150, 20, { bonds: [25, 20] }),
  }),
  partner('kente', {
    name: 'Kente Stockbrokers (sandbox)',
    jurisdiction: 'GHANA',
    capabilities: ['equities', 'reit', 'money_market'],
    approved_since: '2021-07-19',
    fees: tariff('GHS', 200, 10, { money_market: [25, 10] }),
  }),
  partner('adinkra', {
    name: 'Adinkra Fixed Income (sandbox)',
    jurisdiction: 'GHANA',
    capabilities: ['bonds'],
    approved_since: '2024-02-12',
    fees: tariff('GHS', 25, 50),
  }),
  partner('niger', {
    name: 'Fleuve Niger Courtage (sandbox)',
    jurisdiction: 'UEMOA',
    capabilities: ['equities'],
    status: 'pending',
    fees: tariff('XOF', 100, 2_500),
  }),
  partner('ogooue', {
    name: 'Ogooue Capital (sandbox)',
    jurisdiction: 'CEMAC',
    capabilities: ['equities', 'opcvm'],
    status: 'suspended',
    fees: tariff('XAF', 50, 5_000),
  }),
];

const CURRENCY_OF: Record<PartnerImportRow['jurisdiction'], string> = { UEMOA: 'XOF', CEMAC: 'XAF', GHANA: 'GHS' };

/** A partner's commission as docs/sandbox.md lists it: `| name | 1 % | 2,500 XOF | bonds 0.5 % |`. */
export function sandboxTariffRow(p: PartnerImportRow): string {
  const v = p.fees?.[0];
  if (v === undefined) return `| ${p.name} | none | | |`;
  const pct = (bps: number) => `${bps / 100} %`;
  const units = (cents: number) => `${(cents / 100).toLocaleString('en-US')} ${CURRENCY_OF[p.jurisdiction]}`;
  const others = Object.entries(v.by_class ?? {}).flatMap(([cls, c]) => (c === undefined ? [] : [`${cls} ${pct(c.rate_bps)}`]));
  return `| ${p.name} | ${pct(v.commission.rate_bps)} | ${units(v.commission.minimum_cents)} | ${others.length === 0 ? 'none' : others.join(', ')} |`;
}

const i = (
  code: string,
  cls: InstrumentImportRow['class'],
  name: string,
  units: number,
  status: 'active' | 'suspended' = 'active',
  extra: Partial<InstrumentImportRow> = {},
): InstrumentImportRow => ({
  code,
  class: cls,
  name: `${name} (synthetic)`,
  reference_price_cents: Math.round(units * 100),
  status,
  ...extra,
});

// Prices in the exchange's currency: XOF, XAF, GHS. Synthetic instruments keep the import's defaults:
// a one-cent tick, lots of 1, the exchange's band (none for funds and bills, so that the resting
// limits of the test values, 1 cent and the largest price, are accepted there).
export const SYNTHETIC_INSTRUMENTS: readonly InstrumentImportRow[] = [
  i('KOLA.BRVM', 'equities', 'Kola Agro-Industries', 15_500),
  i('TELCI.BRVM', 'equities', 'Telecom Lagunaire', 24_900),
  i('CIMSN.BRVM', 'equities', 'Ciments du Sine', 7_200),
  i('BNKAB.BRVM', 'equities', 'Banque Abidjanaise de Credit', 9_850),
  i('HUILB.BRVM', 'equities', 'Huileries du Bandama', 3_400),
  i('TRANS.BRVM', 'equities', 'Transports Sahel Express', 1_250, 'suspended'),
  i('ENRGB.BRVM', 'junior_board', 'Energie Solaire du Faso', 850),
  i('AGRTG.BRVM', 'junior_board', 'Agritech Togo', 1_100, 'active', { lot_size: 10 }),
  i('ETCI2031.BRVM', 'bonds', 'Etat Lagunaire 6.25% 2031', 10_000),
  i('ETSN2029.BRVM', 'bonds', 'Etat du Sine 5.95% 2029', 10_000),
  i('BOAD2033.BRVM', 'bonds', 'Banque Regionale de Developpement 5.85% 2033', 10_000),
  i('FCPEPA.BRVM', 'opcvm', 'FCP Epargne Atlantique', 11_560),
  i('FCPACT.BRVM', 'opcvm', 'FCP Actions Regionales', 14_230),
  i('SCPIAB.BRVM', 'reit', 'SCPI Immobilier Abidjan', 52_000),
  i('BTUMOA26.BRVM', 'money_market', 'Bon du Tresor UMOA 26 semaines', 9_700),
  i('BTUMOA52.BRVM', 'money_market', 'Bon du Tresor UMOA 52 semaines', 9_420),
  i('PALMC.BVMAC', 'equities', 'Palmeraies du Cameroun Centrale', 42_000),
  i('EAUXG.BVMAC', 'equities', 'Eaux du Gabon Centrale', 61_500),
  i('BRASC.BVMAC', 'equities', 'Brasseries Sanaga', 38_750, 'suspended'),
  i('GABN2030.BVMAC', 'bonds', 'Republique Ogooue 6.5% 2030', 10_000),
  i('CMR2028.BVMAC', 'bonds', 'Etat Sanaga 5.6% 2028', 10_000),
  i('FCPCEN.BVMAC', 'opcvm', 'FCP Croissance Centrale', 10_870),
  i('BTCEM13.BVMAC', 'money_market', 'Bon du Tresor CEMAC 13 semaines', 9_890),
  i('GOLDF.GSE', 'equities', 'Golden Forest Mining', 52),
  i('COCOA.GSE', 'equities', 'Ashanti Cocoa Processing Collective', 9),
  i('TELGH.GSE', 'equities', 'Accra Mobile Networks', 29.6),
  i('BKGH.GSE', 'equities', 'Volta Commercial Bank', 79),
  i('SHEAG.GSE', 'junior_board', 'Shea Growers Cooperative', 1.9),
  i('GHGOV2030.GSE', 'bonds', 'Ghana Synthetic Treasury 9% 2030', 100),
  i('GHGOV2027.GSE', 'bonds', 'Ghana Synthetic Treasury 8% 2027', 100),
  i('AREIT.GSE', 'reit', 'Accra Real Estate Trust', 152),
  i('TBGH91.GSE', 'money_market', 'Synthetic Treasury Bill 91 days', 96.5),
  i('SOLAR.GSE', 'equities', 'Savannah Solar Power', 12.2, 'suspended'),
];

/** The whole sandbox catalogue: the listed instruments, then the synthetic ones. */
export const SANDBOX_INSTRUMENTS: readonly InstrumentImportRow[] = [...LISTED_INSTRUMENTS, ...SYNTHETIC_INSTRUMENTS];

/**
 * Seeds the sandbox directory once, when the partner table is empty. A directory seeded by an older
 * version gets the catalogue's instruments it lacks, and each sandbox partner that has no fee
 * schedule gets its own; no instrument or schedule that exists is changed. Returns whether it wrote
 * anything.
 */
export async function seedSandboxDirectory(db: Kysely<Database>, dialect: DialectName, now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    // Processes starting together on one PostgreSQL database would each find the directory empty.
    await lockForTransaction(trx, dialect, 'seed:sandbox-directory');
    let rows = SANDBOX_INSTRUMENTS;
    let wrote = false;
    if ((await countPartners(trx)) > 0) {
      const known = new Set((await trx.selectFrom('instruments').select('code').execute()).map((r) => r.code));
      rows = SANDBOX_INSTRUMENTS.filter((row) => !known.has(row.code));
      wrote = await seedSandboxFees(trx, now);
      if (rows.length === 0) return wrote;
    } else {
      const partners = await importPartners(trx, SANDBOX_PARTNERS, { now });
      if (!partners.committed) throw new Error(`sandbox seed data is invalid: ${JSON.stringify(partners.rejected)}`);
    }
    const instruments = await importInstruments(trx, rows, { now });
    if (!instruments.committed) throw new Error(`sandbox seed data is invalid: ${JSON.stringify(instruments.rejected)}`);
    return true;
  });
}

/** The sandbox partners' schedules, for those of them still in the directory without any. */
async function seedSandboxFees(trx: Kysely<Database>, now: Date): Promise<boolean> {
  const scheduled = new Set((await listSchedules(trx, { scope: 'partner' })).map((r) => r.owner));
  const present = new Set((await trx.selectFrom('partners').select('id').execute()).map((r) => r.id));
  let wrote = false;
  for (const p of SANDBOX_PARTNERS) {
    if (p.id === undefined || p.fees === undefined || !present.has(p.id) || scheduled.has(p.id)) continue;
    for (const row of partnerFeeRows(p.id, p.fees, now.getTime())) await insertScheduleIfAbsent(trx, row);
    wrote = true;
  }
  return wrote;
}
