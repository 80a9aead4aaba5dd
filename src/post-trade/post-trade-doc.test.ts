import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SANDBOX_PARTNERS } from '../partners/sandbox-seed.js';
import { fillAmounts, type FeeAmount } from '../partners/core/fees.js';
import { scheduleFor, type ExchangeFeeVersion, type PartnerFeeVersion } from '../partners/core/fee-schedule.js';
import { validateExchangeFeeEntry, validatePartnerFees } from '../partners/fee-file.js';
import { readShippedFees } from '../partners/fee-schedule.service.js';

// docs/post-trade.md is what operators and integrators read: its example files must import, and its
// worked examples must be what the service computes with the shipped schedules.
const doc = readFileSync(new URL('../../../docs/post-trade.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] as string);

const exchange = (code: string) =>
  (readShippedFees().find((f) => f.file === `${code}.json`)?.content as ExchangeFeeVersion[])[0] as ExchangeFeeVersion;
const partner = (name: string) => SANDBOX_PARTNERS.find((p) => p.name.startsWith(name))?.fees?.[0] as PartnerFeeVersion;
const none = { gross_cents: 0n, fees: [] as FeeAmount[] };
const units = (cents: bigint, decimals = false) => {
  const whole = (cents / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return decimals ? `${whole}.${(cents % 100n).toString().padStart(2, '0')}` : whole;
};
const totalOf = (fees: readonly FeeAmount[]) => fees.reduce((sum, f) => sum + f.amount_cents, 0n);

test('the example fee files of docs/post-trade.md are valid', () => {
  const entry = blocks.find((b) => b.trimStart().startsWith('{\n  "exchange"'));
  assert.ok(entry);
  assert.deepEqual(validateExchangeFeeEntry(JSON.parse(entry)), []);
  const fees = blocks.find((b) => b.trimStart().startsWith('"fees"'));
  assert.ok(fees);
  assert.deepEqual(validatePartnerFees((JSON.parse(`{${fees}}`) as { fees: unknown }).fees), []);
});

test('the worked examples of docs/post-trade.md are what the service computes', () => {
  const brvm = scheduleFor(partner('Baobab'), exchange('BRVM'), 'equities');
  const a = fillAmounts({ side: 'buy', qty: 10, price_cents: 1_550_000, instrumentClass: 'equities', schedule: brvm, earlier: none });
  assert.ok(doc.includes(`| Fees | | ${units(totalOf(a.fees))} |`));
  assert.ok(doc.includes(`| Net (a buy) | 155,000 + ${units(totalOf(a.fees))} | ${units(a.net_cents)} |`));
  assert.ok(doc.includes(`\`net_cents: ${a.net_cents}\``));

  const b1 = fillAmounts({ side: 'buy', qty: 40, price_cents: 1_551_000, instrumentClass: 'equities', schedule: brvm, earlier: none });
  const b2 = fillAmounts({
    side: 'buy',
    qty: 60,
    price_cents: 1_549_500,
    instrumentClass: 'equities',
    schedule: brvm,
    earlier: { gross_cents: b1.gross_cents, fees: b1.fees },
  });
  const feeLine = `| Fees | ${units(totalOf(b1.fees))} | | ${units(totalOf(b2.fees))} | ${units(totalOf(b1.fees) + totalOf(b2.fees))} |`;
  assert.ok(doc.includes(feeLine), feeLine);
  assert.ok(doc.includes(`| Net | ${units(b1.net_cents)} | | ${units(b2.net_cents)} | ${units(b1.net_cents + b2.net_cents)} |`));

  const gse = fillAmounts({
    side: 'sell',
    qty: 500,
    price_cents: 2_960,
    instrumentClass: 'equities',
    schedule: scheduleFor(partner('Volta'), exchange('GSE'), 'equities'),
    earlier: none,
  });
  assert.ok(doc.includes(`Fees GHS ${units(totalOf(gse.fees), true)},\nnet (a sale) GHS ${units(gse.net_cents, true)}.`));
});
