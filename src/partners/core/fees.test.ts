import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyRate, bpsRate, fillAmounts, sumFees, type FeeAmount, type FeeSchedule, type Rounding } from './fees.js';

const francs: Rounding = { mode: 'half_up', increment_cents: 100n };
const cents: Rounding = { mode: 'half_up', increment_cents: 1n };

/** A BRVM-like schedule, worked by hand below: 1 % commission with a 5,000 XOF minimum, 18 % tax on it. */
const BRVM_LIKE: FeeSchedule = {
  commission: { rate: bpsRate('100'), minimum_cents: 500_000n, rounding: francs },
  components: [
    { type: 'exchange', rate: bpsRate('15'), rounding: francs, classes: null },
    { type: 'depository', rate: bpsRate('10'), rounding: francs, classes: null },
    { type: 'regulator', rate: bpsRate('5'), rounding: francs, classes: null },
  ],
  tax: { rate: bpsRate('1800'), on: ['commission'], rounding: francs },
};

const none = { gross_cents: 0n, fees: [] as FeeAmount[] };
const plain = (fees: readonly FeeAmount[]) => fees.map((f) => [f.type, f.amount_cents]);

test('rates in basis points are exact fractions, with up to four decimals', () => {
  assert.deepEqual(bpsRate('15'), { num: 15n, den: 1n });
  assert.deepEqual(bpsRate('7.5'), { num: 75n, den: 10n });
  assert.deepEqual(bpsRate('0.0045'), { num: 45n, den: 10_000n });
  assert.deepEqual(bpsRate('0'), { num: 0n, den: 1n });
  for (const bad of ['', '-1', '1e3', '01', '1.23456', '.5', '1.']) assert.throws(() => bpsRate(bad), RangeError, bad);
});

test('rounding: half up, down and up, to a cent or to a whole franc', () => {
  // 155,000.00 XOF at 15 bps is 232.50 XOF.
  assert.equal(applyRate(15_500_000n, bpsRate('15'), francs), 23_300n);
  assert.equal(applyRate(15_500_000n, bpsRate('15'), { mode: 'down', increment_cents: 100n }), 23_200n);
  assert.equal(applyRate(15_500_000n, bpsRate('15'), { mode: 'up', increment_cents: 100n }), 23_300n);
  assert.equal(applyRate(15_500_000n, bpsRate('15'), cents), 23_250n, 'exact in cents');
  // Exactly one half: 1 cent at 50 %.
  assert.equal(applyRate(1n, bpsRate('5000'), cents), 1n);
  assert.equal(applyRate(1n, bpsRate('5000'), { mode: 'down', increment_cents: 1n }), 0n);
  assert.equal(applyRate(1n, bpsRate('5000'), { mode: 'up', increment_cents: 1n }), 1n);
  // Just under and just over a half.
  assert.equal(applyRate(4_999n, bpsRate('1'), cents), 0n, '0.4999 -> 0');
  assert.equal(applyRate(5_001n, bpsRate('1'), cents), 1n, '0.5001 -> 1');
  assert.equal(applyRate(1n, bpsRate('0.0001'), { mode: 'up', increment_cents: 1n }), 1n, 'up takes any remainder');
  // Fractional basis points: 0.0045 % of 1,000,000 cents is 45 cents; 7.5 bps of it is 750.
  assert.equal(applyRate(1_000_000n, bpsRate('0.45'), cents), 45n);
  assert.equal(applyRate(1_000_000n, bpsRate('7.5'), cents), 750n);
  // Beyond 2^53: 1e21 cents at 15 bps is 1.5e18 cents, exactly.
  assert.equal(applyRate(10n ** 21n, bpsRate('15'), cents), 1_500_000_000_000_000_000n);
  assert.equal(applyRate(10n ** 21n + 1n, bpsRate('15'), { mode: 'up', increment_cents: 1n }), 1_500_000_000_000_000_001n);
  assert.throws(() => applyRate(-1n, bpsRate('1'), cents), RangeError);
});

test("one fill under the minimum: the minimum commission, the exchange's fees, tax on the commission (worked by hand)", () => {
  // 10 @ 15,500 XOF: gross 155,000 XOF. Commission 1 % = 1,550 XOF, below the 5,000 XOF minimum.
  const a = fillAmounts({ side: 'buy', qty: 10, price_cents: 1_550_000, instrumentClass: 'equities', schedule: BRVM_LIKE, earlier: none });
  assert.equal(a.gross_cents, 15_500_000n);
  assert.deepEqual(plain(a.fees), [
    ['commission', 500_000n], // the minimum
    ['exchange', 23_300n], // 232.50 XOF -> 233
    ['depository', 15_500n], // 155.00 XOF
    ['regulator', 7_800n], // 77.50 XOF -> 78
    ['tax', 90_000n], // 18 % of 5,000 XOF
  ]);
  assert.equal(a.net_cents, 15_500_000n + 636_600n, 'a buy pays gross plus fees');
  const sell = fillAmounts({
    side: 'sell',
    qty: 10,
    price_cents: 1_550_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: none,
  });
  assert.deepEqual(sell.fees, a.fees);
  assert.equal(sell.net_cents, 15_500_000n - 636_600n, 'a sell receives gross minus fees');
});

test('several fills of one order and day: the minimum once, the order charged as one execution of its quantity', () => {
  const first = fillAmounts({
    side: 'buy',
    qty: 10,
    price_cents: 1_550_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: none,
  });
  // 40 more @ 15,500: the day's gross is 775,000 XOF, commission 7,750 XOF, of which 5,000 was paid.
  const second = fillAmounts({
    side: 'buy',
    qty: 40,
    price_cents: 1_550_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: { gross_cents: first.gross_cents, fees: first.fees },
  });
  assert.deepEqual(plain(second.fees), [
    ['commission', 275_000n], // 7,750 - 5,000
    ['exchange', 93_000n], // 1,162.50 -> 1,163 for the day, 233 paid
    ['depository', 62_000n], // 775 - 155
    ['regulator', 31_000n], // 387.50 -> 388, 78 paid
    ['tax', 49_500n], // 18 % of 7,750 = 1,395, 900 paid
  ]);
  // The same 50 shares in one fill cost exactly the sum of the two.
  const whole = fillAmounts({
    side: 'buy',
    qty: 50,
    price_cents: 1_550_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: none,
  });
  assert.deepEqual(sumFees([first.fees, second.fees]), [...whole.fees]);
  // A third small fill while the commission is still under the minimum pays no commission, only what the rates add.
  const tiny = fillAmounts({
    side: 'buy',
    qty: 1,
    price_cents: 1_000_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: none,
  });
  const tiny2 = fillAmounts({
    side: 'buy',
    qty: 1,
    price_cents: 1_000_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: { gross_cents: tiny.gross_cents, fees: tiny.fees },
  });
  assert.deepEqual(plain(tiny2.fees), [
    ['commission', 0n], // 200 XOF of rate, still under the 5,000 XOF already charged
    ['exchange', 1_500n], // 30.00 for the day, 15.00 paid
    ['depository', 1_000n],
    ['regulator', 500n],
    ['tax', 0n],
  ]);
});

test('rounding does not add up over many fills: a hundred one-share fills cost what one hundred-share fill costs', () => {
  const schedule: FeeSchedule = { ...BRVM_LIKE, commission: { rate: bpsRate('100'), minimum_cents: 0n, rounding: francs } };
  let earlier = { gross_cents: 0n, fees: [] as FeeAmount[] };
  for (let i = 0; i < 100; i++) {
    const f = fillAmounts({ side: 'buy', qty: 1, price_cents: 3_350, instrumentClass: 'equities', schedule, earlier });
    earlier = { gross_cents: earlier.gross_cents + f.gross_cents, fees: [...earlier.fees, ...f.fees] };
  }
  const whole = fillAmounts({ side: 'buy', qty: 100, price_cents: 3_350, instrumentClass: 'equities', schedule, earlier: none });
  assert.deepEqual(sumFees([earlier.fees]), [...whole.fees]);
  // Charged one by one, each 33.50 XOF fill would pay 0.335 -> 0 of commission; a hundred of them 0, not 3.
  assert.equal(whole.fees.find((f) => f.type === 'commission')?.amount_cents, 3_400n, '33.50 -> 34 XOF');
});

test('components restricted to some classes, tax on several types, no schedule at all', () => {
  const gse: FeeSchedule = {
    commission: { rate: bpsRate('150'), minimum_cents: 0n, rounding: cents },
    components: [
      { type: 'exchange', rate: bpsRate('35'), rounding: cents, classes: ['equities', 'junior_board'] },
      { type: 'exchange', rate: bpsRate('0.45'), rounding: cents, classes: ['bonds'] },
      { type: 'levy', rate: bpsRate('5'), rounding: cents, classes: ['equities'] },
    ],
    tax: { rate: bpsRate('2000'), on: ['commission', 'exchange'], rounding: { mode: 'down', increment_cents: 1n } },
  };
  // 1,000 @ GHS 5.20: gross 520,000 pesewas.
  const eq = fillAmounts({ side: 'sell', qty: 1000, price_cents: 520, instrumentClass: 'equities', schedule: gse, earlier: none });
  // commission 7,800; exchange 1,820; levy 260; tax 20 % of 9,620 = 1,924.
  assert.deepEqual(plain(eq.fees), [
    ['commission', 7_800n],
    ['exchange', 1_820n],
    ['levy', 260n],
    ['tax', 1_924n],
  ]);
  assert.equal(eq.net_cents, 520_000n - 11_804n);
  const bond = fillAmounts({ side: 'buy', qty: 1000, price_cents: 10_000, instrumentClass: 'bonds', schedule: gse, earlier: none });
  // gross 10,000,000; commission 150,000; exchange 0.45 bps = 450; tax 20 % of 150,450 = 30,090.
  assert.deepEqual(plain(bond.fees), [
    ['commission', 150_000n],
    ['exchange', 450n],
    ['tax', 30_090n],
  ]);
  const unknown = fillAmounts({ side: 'buy', qty: 1, price_cents: 10_000, instrumentClass: null, schedule: gse, earlier: none });
  assert.deepEqual(
    plain(unknown.fees).map(([t]) => t),
    ['commission', 'tax'],
    'an instrument out of the catalogue: only unrestricted components',
  );
  const free = fillAmounts({
    side: 'buy',
    qty: 3,
    price_cents: 7,
    instrumentClass: 'equities',
    schedule: { commission: null, components: [], tax: null },
    earlier: none,
  });
  assert.deepEqual(free, { gross_cents: 21n, fees: [], net_cents: 21n });
});

test('a sell whose fees exceed its gross has a negative net; a cheaper schedule later in the day charges zero, never less', () => {
  const small = fillAmounts({
    side: 'sell',
    qty: 1,
    price_cents: 100_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: none,
  });
  assert.equal(small.fees[0]?.amount_cents, 500_000n);
  assert.ok(small.net_cents < 0n);
  const cheaper: FeeSchedule = { ...BRVM_LIKE, commission: { rate: bpsRate('10'), minimum_cents: 100_000n, rounding: francs } };
  const later = fillAmounts({
    side: 'sell',
    qty: 1,
    price_cents: 100_000,
    instrumentClass: 'equities',
    schedule: cheaper,
    earlier: { gross_cents: small.gross_cents, fees: small.fees },
  });
  assert.equal(later.fees[0]?.amount_cents, 0n);
  assert.ok(later.fees.every((f) => f.amount_cents >= 0n));
});

test('huge fills stay exact', () => {
  const f = fillAmounts({
    side: 'buy',
    qty: 1_000_000_000,
    price_cents: 1_000_000_000_000,
    instrumentClass: 'equities',
    schedule: BRVM_LIKE,
    earlier: none,
  });
  assert.equal(f.gross_cents, 10n ** 21n);
  assert.equal(f.fees[0]?.amount_cents, 10n ** 19n);
  assert.equal(f.fees.at(-1)?.amount_cents, 18n * 10n ** 17n);
  assert.throws(
    () => fillAmounts({ side: 'buy', qty: 0, price_cents: 1, instrumentClass: null, schedule: BRVM_LIKE, earlier: none }),
    RangeError,
  );
});
