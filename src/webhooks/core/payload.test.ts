import { test } from 'node:test';
import assert from 'node:assert/strict';
import { envelopeOf } from '../../events/event.service.js';
import { EVENT_TYPES } from '../../events/event.types.js';
import { isId, newId, type IdKind } from '../../lib/ids.js';
import { bodyAjv } from '../../lib/validation.js';
import { Order } from '../../orders/order.schemas.js';
import { INSTRUMENT_CODE_PATTERN } from '../../partners/markets.js';
import { PositionBreak, PositionBreakEvent } from '../../positions/position.schemas.js';
import { serializeEnvelope, storedEnvelopeBody } from '../../events/envelope.js';
import { EVENT_DATA } from '../event-data.js';
import { sampleEventData, type SampleContext } from './payload.js';
import { signatureHeader, verifySignatureHeader } from './signature.js';

const AT = new Date('2026-11-22T10:00:00.123Z');
const ENDPOINT = newId('webhookEndpoint');
const context: SampleContext = { at: AT, endpointId: ENDPOINT };

const DATE_TIME_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DATE_TIME_S = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const BASE64URL_SIG = /^[A-Za-z0-9_-]{86}$/; // 64 bytes, unpadded

function assertId(kind: IdKind, value: unknown, label: string): void {
  assert.ok(isId(kind, value), `${label}: ${String(value)} is a ${kind} id`);
}

test('serializeEnvelope: compact JSON, members in the fixed order whatever the input order', () => {
  const body = serializeEnvelope({
    livemode: false,
    data: { b: 1, a: [1, 'é'] },
    created_at: '2026-11-22T10:00:00.123Z',
    type: 'webhook.test',
    id: 'evt_01h455vb4pex5vsknk084sn02q',
  });
  assert.equal(
    body,
    '{"id":"evt_01h455vb4pex5vsknk084sn02q","type":"webhook.test","created_at":"2026-11-22T10:00:00.123Z","data":{"b":1,"a":[1,"é"]},"livemode":false}',
  );
});

test('serializeEnvelope: extra members on the input are not sent', () => {
  const envelope = { id: 'evt_x', type: 'webhook.test', created_at: AT.toISOString(), data: {}, livemode: true, secret: 'whsec_leak' };
  const body = serializeEnvelope(envelope);
  assert.deepEqual(Object.keys(JSON.parse(body) as object), ['id', 'type', 'created_at', 'data', 'livemode']);
  assert.ok(!body.includes('whsec_leak'));
});

test('serializeEnvelope: data must be a JSON object', () => {
  for (const data of [undefined, null, [], 'x', 1, true]) {
    assert.throws(
      () => serializeEnvelope({ id: 'evt_x', type: 'webhook.test', created_at: AT.toISOString(), data, livemode: false }),
      TypeError,
    );
  }
});

test('storedEnvelopeBody: the bytes of serializeEnvelope over the parsed event, for every kind of data the service stores', () => {
  const datas: unknown[] = [
    {},
    { b: 1, a: [1, 'é'] },
    // Integer-like keys come first in ascending order in any object, so JSON.stringify wrote them so.
    { z: 1, 10: 'ten', 2: 'two', '-1': 'minus one', 1.5: 'x' },
    { ['__proto__']: { polluted: true }, constructor: 'c' },
    { text: 'quote " backslash \\ slash / tab \t newline \n nul \u0000 line sep \u2028 emoji 😀 lone \ud800 end' },
    {
      numbers: [0, -0, 1e21, 1e-7, 123.456, -5e-324, 1.7976931348623157e308, 2 ** 53 + 2],
      nested: { deep: [{ a: null, b: true, c: false }] },
    },
    { date: new Date(Date.UTC(2026, 10, 22, 10)), undefinedMember: undefined, fn: () => 1 },
    ...EVENT_TYPES.map((type) => sampleEventData(type, context)),
  ];
  for (const [i, data] of datas.entries()) {
    const row = {
      id: newId('event'),
      client_id: null,
      type: 'order.created',
      livemode: i % 2,
      created_at: AT.getTime() + i,
      data: JSON.stringify(data),
      subject_ref: null,
    };
    assert.equal(storedEnvelopeBody(row), serializeEnvelope(envelopeOf(row)), row.data);
  }
  // Stored text that is not an object is refused, as serializeEnvelope refuses such data.
  for (const data of ['[]', 'null', '"x"', '1']) {
    assert.throws(() => storedEnvelopeBody({ id: 'evt_x', type: 'webhook.test', created_at: AT.getTime(), data, livemode: 0 }), TypeError);
  }
});

test('the stored body is signed anew at each attempt over identical bytes', () => {
  const body = serializeEnvelope({
    id: newId('event'),
    type: 'order.created',
    created_at: AT.toISOString(),
    data: sampleEventData('order.created', context),
    livemode: false,
  });
  const first = signatureHeader(['whsec_s'], 1700000000, body);
  const second = signatureHeader(['whsec_s'], 1700000030, body);
  assert.notEqual(first, second);
  assert.deepEqual(verifySignatureHeader(first, body, 'whsec_s', { now: 1700000000 }), { valid: true });
  assert.deepEqual(verifySignatureHeader(second, Buffer.from(body, 'utf8'), 'whsec_s', { now: 1700000030 }), { valid: true });
});

// Every member of the API's Order, so that a sample never lags behind a real event; but for
// `test_clock`, which only a sandbox order placed on a test clock has (the samples are on real time).
const ORDER_MEMBERS = Object.keys(Order.properties).filter((member) => member !== 'test_clock');

for (const [type, status] of [
  ['order.created', 'created'],
  ['order.routed', 'routed'],
  ['order.failed', 'failed'],
] as const) {
  test(`sample ${type}: an Order with every spec field plus failure_reason and client_metadata`, () => {
    const order = sampleEventData(type, context);
    assert.deepEqual(Object.keys(order).sort(), [...ORDER_MEMBERS].sort());
    assert.equal(order.status, status);
    assertId('order', order.id, 'id');
    assertId('partner', order.rcpt_to, 'rcpt_to');
    assertId('attestation', order.kyc_attestation_id, 'kyc_attestation_id');
    assert.match(order.instrument, new RegExp(INSTRUMENT_CODE_PATTERN));
    assert.ok(order.side === 'buy' || order.side === 'sell');
    assert.ok(Number.isInteger(order.qty) && order.qty >= 1);
    assert.ok(order.limit_price_cents === null || (Number.isInteger(order.limit_price_cents) && order.limit_price_cents >= 1));
    assert.equal(order.filled_qty, 0);
    assert.equal(order.average_fill_price_cents, null);
    assert.match(order.created_at, DATE_TIME_MS);
    assert.match(order.updated_at, DATE_TIME_MS);
    assert.ok(order.created_at <= order.updated_at);
    assert.equal(order.updated_at, AT.toISOString());
    assert.equal(order.failure_reason, type === 'order.failed' ? 'sgi_rejected' : null);
    assert.equal(typeof order.client_metadata, 'object');
  });
}

test('samples order.cancelled, order.amended, order.request_refused: Orders that show what happened', () => {
  const cancelled = sampleEventData('order.cancelled', context);
  const amended = sampleEventData('order.amended', context);
  const refused = sampleEventData('order.request_refused', context);
  for (const order of [cancelled, amended, refused]) {
    assert.deepEqual(Object.keys(order).sort(), [...ORDER_MEMBERS].sort());
    assert.ok(order.filled_qty < order.qty);
    assert.match(order.expires_at ?? '', DATE_TIME_MS);
  }
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.cancel_reason, 'requested');
  assert.equal(amended.status, 'partially_filled');
  assert.equal(amended.qty, 150);
  assert.equal(refused.last_refusal?.request, 'cancel');
  assert.equal(refused.cancel_reason, null);
});

test("samples of a day order expire at the exchange's next close after they were placed, never before", () => {
  const cases: [string, string][] = [
    ['2026-11-23T10:00:00.000Z', '2026-11-23T15:00:00.000Z'], // Monday, in the session
    ['2026-11-23T16:00:00.000Z', '2026-11-24T15:00:00.000Z'], // Monday, after the close
    ['2026-11-27T17:54:00.000Z', '2026-11-30T15:00:00.000Z'], // Friday, after the close
    ['2026-11-28T17:54:00.000Z', '2026-11-30T15:00:00.000Z'], // Saturday
    ['2026-11-22T10:00:00.123Z', '2026-11-23T15:00:00.000Z'], // Sunday
  ];
  for (const [at, close] of cases) {
    for (const type of ['order.created', 'order.routed', 'order.failed', 'order.cancelled', 'order.amended'] as const) {
      const order = sampleEventData(type, { at: new Date(at), endpointId: ENDPOINT });
      assert.equal(order.expires_at, close, `${type} at ${at}`);
      assert.ok(order.created_at < close, `${type} at ${at}: placed before it expires`);
    }
  }
});

test('sample position.break: every member of the event, a statement compared with the one before, each break consistent', () => {
  const data = sampleEventData('position.break', context);
  assert.deepEqual(Object.keys(data).sort(), Object.keys(PositionBreakEvent.properties).sort());
  assertId('statement', data.statement_id, 'statement_id');
  assertId('statement', data.previous_statement_id, 'previous_statement_id');
  assertId('partner', data.rcpt_to, 'rcpt_to');
  assert.match(data.as_of, DATE);
  assert.ok(data.as_of < AT.toISOString().slice(0, 10), 'a past day');
  assert.ok(data.breaks.length >= 1);
  for (const b of data.breaks) {
    assert.deepEqual(Object.keys(b).sort(), Object.keys(PositionBreak.properties).sort());
    assert.match(b.instrument, new RegExp(INSTRUMENT_CODE_PATTERN));
    assert.equal(b.difference_qty, b.statement_qty - b.expected_qty);
    assert.notEqual(b.difference_qty, 0);
  }
});

test('sample order.executed: the spec fields plus fill_qty, fill_price_cents, status, consistent', () => {
  const data = sampleEventData('order.executed', context);
  assert.deepEqual(Object.keys(data).sort(), [
    'average_fill_price_cents',
    'exchange_ref',
    'executed_at',
    'fill_price_cents',
    'fill_qty',
    'filled_qty',
    'instrument',
    'order_id',
    'rcpt_to',
    'side',
    'status',
  ]);
  assertId('order', data.order_id, 'order_id');
  assertId('partner', data.rcpt_to, 'rcpt_to');
  assert.match(data.instrument, new RegExp(INSTRUMENT_CODE_PATTERN));
  assert.match(data.executed_at, DATE_TIME_MS);
  assert.equal(typeof data.exchange_ref, 'string');
  assert.ok(data.exchange_ref.length > 0);
  for (const n of [data.filled_qty, data.average_fill_price_cents, data.fill_qty, data.fill_price_cents])
    assert.ok(Number.isInteger(n) && n > 0);
  assert.ok(data.fill_qty <= data.filled_qty, 'this fill is part of the cumulative quantity');
  assert.ok(data.status === 'partially_filled' || data.status === 'filled');
  // 60 @ 2,495,000 then 40 @ 2,500,000: the quantity-weighted mean.
  assert.equal(data.average_fill_price_cents, 2_497_000);
});

test('sample kyc.attested: attestation-shaped, whole-second dates, unverifiable signature', () => {
  const data = sampleEventData('kyc.attested', context);
  assert.deepEqual(Object.keys(data).sort(), [
    'expires_at',
    'id',
    'issued_at',
    'issuer',
    'jurisdictions',
    'key_id',
    'level',
    'signature',
    'subject_id',
    'verifications',
    'version',
  ]);
  assertId('attestation', data.id, 'id');
  assertId('signingKey', data.key_id, 'key_id');
  assert.equal(data.version, '1.0');
  assert.equal(data.issuer, 'cauri');
  assert.equal(sampleEventData('kyc.attested', { ...context, issuer: 'other' }).issuer, 'other');
  assert.match(data.subject_id, /^[A-Za-z0-9._:-]{1,128}$/);
  assert.match(data.issued_at, DATE_TIME_S);
  assert.match(data.expires_at, DATE_TIME_S);
  assert.ok(data.issued_at < data.expires_at);
  assert.match(data.signature, BASE64URL_SIG);
  assert.ok(data.jurisdictions.length > 0);
  // KYC2 needs id_doc, selfie, address and liveness (docs/concepts.md).
  assert.equal(data.level, 'KYC2');
  assert.deepEqual(data.verifications.map((v) => v.type).sort(), ['address', 'id_doc', 'liveness', 'selfie']);
  for (const v of data.verifications) {
    assert.match(v.verified_at, DATE_TIME_S);
    assert.ok(v.verified_at <= data.issued_at);
  }
});

test('sample kyc.revoked: { attestation_id, subject_id, revoked_at, reason }', () => {
  const data = sampleEventData('kyc.revoked', context);
  assert.deepEqual(Object.keys(data).sort(), ['attestation_id', 'reason', 'revoked_at', 'subject_id']);
  assertId('attestation', data.attestation_id, 'attestation_id');
  assert.match(data.revoked_at, DATE_TIME_S);
  assert.ok(['superseded', 'compromised', 'subject_request', 'other'].includes(data.reason));
});

test('sample audit.snapshot: an AuditSnapshot with its extensions', () => {
  const data = sampleEventData('audit.snapshot', context);
  assert.deepEqual(Object.keys(data).sort(), [
    'anchored_at',
    'anchors',
    'count',
    'date',
    'key_id',
    'merkle_root',
    'previous_merkle_root',
    'signature',
  ]);
  assert.match(data.date, DATE);
  assert.equal(data.date, '2026-11-21', 'the day before the event');
  assert.match(data.merkle_root, HEX64);
  assert.match(data.previous_merkle_root ?? '', HEX64);
  assert.notEqual(data.merkle_root, data.previous_merkle_root);
  assert.ok(Number.isInteger(data.count) && data.count >= 0);
  assert.match(data.anchored_at, DATE_TIME_S);
  assert.ok(data.anchored_at > `${data.date}T23:59:59Z`, 'anchored after the day ended');
  assert.ok(data.anchors.length > 0);
  for (const anchor of data.anchors) {
    assert.deepEqual(Object.keys(anchor).sort(), ['block_height', 'chain', 'tx_hash']);
    assert.equal(typeof anchor.chain, 'string');
    assert.equal(typeof anchor.tx_hash, 'string');
    assert.ok(Number.isInteger(anchor.block_height));
  }
  assertId('signingKey', data.key_id, 'key_id');
  assert.match(data.signature, BASE64URL_SIG);
});

test('sample webhook.test: { message, endpoint_id } naming the endpoint', () => {
  const data = sampleEventData('webhook.test', context);
  assert.deepEqual(Object.keys(data).sort(), ['endpoint_id', 'message']);
  assert.equal(data.endpoint_id, ENDPOINT);
  assert.ok(data.message.length > 0);
});

test('every event type has a sample that serialises into a valid envelope, with fresh ids', () => {
  for (const type of EVENT_TYPES) {
    const data = sampleEventData(type, context);
    const body = serializeEnvelope({ id: newId('event'), type, created_at: AT.toISOString(), data, livemode: false });
    assert.deepEqual((JSON.parse(body) as { data: unknown }).data, data, type);
  }
  assert.notEqual(sampleEventData('order.created', context).id, sampleEventData('order.created', context).id);
});

test("every sample is valid under its event type's data schema, the schema its real events follow", () => {
  for (const type of EVENT_TYPES) {
    const validate = bodyAjv.compile(EVENT_DATA[type]);
    assert.ok(validate(sampleEventData(type, context)), `${type}: ${bodyAjv.errorsText(validate.errors)}`);
  }
  // The schemas are not vacuous: an Order sample with a member of the wrong type is refused.
  assert.equal(bodyAjv.validate(EVENT_DATA['order.created'], { ...sampleEventData('order.created', context), status: 'lost' }), false);
});

test('an event serialised again from its stored row gives the same bytes (a body made again after a worker died)', () => {
  const row = {
    id: newId('event', AT.getTime()),
    client_id: null,
    type: 'order.created',
    livemode: 0,
    created_at: AT.getTime(),
    data: '{"z":1,"10":"x","a":{"\u00e9":"caf\u00e9","b":[1,2.5,null]},"2":true}',
    subject_ref: null,
  };
  const once = serializeEnvelope(envelopeOf(row));
  assert.equal(serializeEnvelope(envelopeOf({ ...row })), once);
  // JSON.parse puts integer-like members first, in numeric order, then the others as written: the
  // same order every time the stored text is parsed.
  assert.ok(once.includes('"data":{"2":true,"10":"x","z":1,"a":{"é":"café","b":[1,2.5,null]}}'), once);
});
