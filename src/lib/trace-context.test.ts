import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { encodeUuid, newId } from './ids.js';
import {
  callerRequestId,
  formatTraceparent,
  newSpanId,
  parseTraceparent,
  parseTracestate,
  requestTrace,
  uuidHexOfId,
} from './trace-context.js';

// The example of the specification (W3C Trace Context, §3.2.2.1 and §3.3.1.1).
const SPEC_EXAMPLE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('traceparent: version 00 parsed as the specification writes it', () => {
  assert.deepEqual(parseTraceparent(SPEC_EXAMPLE), {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    parentId: '00f067aa0ba902b7',
    flags: '01',
  });
  assert.deepEqual(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00')?.flags, '00');
});

test('traceparent: invalid values are ignored, as if absent', () => {
  for (const wrong of [
    '',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // all-zero trace id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // all-zero parent id
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01', // uppercase
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // forbidden version
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', // version 00 has exactly four fields
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7', // no flags
    `${SPEC_EXAMPLE}, ${SPEC_EXAMPLE}`, // sent twice (Node joins repeated headers)
    'not a traceparent',
  ]) {
    assert.equal(parseTraceparent(wrong), null, wrong);
  }
  assert.equal(parseTraceparent(undefined), null);
  assert.equal(parseTraceparent([SPEC_EXAMPLE, SPEC_EXAMPLE]), null);
});

test('traceparent: a later version is read by its first four fields', () => {
  assert.deepEqual(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-later'), {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    parentId: '00f067aa0ba902b7',
    flags: '01',
  });
  assert.equal(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x'), null);
  assert.equal(formatTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', '01'), SPEC_EXAMPLE);
});

test('tracestate: kept when well formed, dropped otherwise', () => {
  assert.equal(parseTracestate('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
  assert.equal(parseTracestate(['rojo=00f067aa0ba902b7', 'congo=t61rcWkgMzE']), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
  assert.equal(parseTracestate('tenant@vendor=abc'), 'tenant@vendor=abc');
  for (const wrong of [
    '',
    'no-equals',
    'UPPER=1',
    `k=${'v'.repeat(600)}`,
    'k=v\u00e9',
    Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','),
  ]) {
    assert.equal(parseTracestate(wrong), null, wrong);
  }
});

test('X-Request-Id of the caller: 1 to 128 characters of [A-Za-z0-9._:-], else ignored', () => {
  for (const ok of ['a', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'gw:2026.11.24_17', 'x'.repeat(128)])
    assert.equal(callerRequestId(ok), ok);
  for (const wrong of ['', 'x'.repeat(129), 'has space', 'semi;colon', 'é', 'a,b']) assert.equal(callerRequestId(wrong), null, wrong);
  assert.equal(callerRequestId(['a', 'b']), null);
  assert.equal(callerRequestId(undefined), null);
});

test('TypeIDs as 32 hex digits: the UUID they encode', () => {
  for (let i = 0; i < 50; i++) {
    const bytes = randomBytes(16);
    assert.equal(uuidHexOfId(`evt_${encodeUuid(bytes)}`), bytes.toString('hex'));
  }
  assert.equal(uuidHexOfId('req_00000000000000000000000000'), '0'.repeat(32));
  assert.equal(uuidHexOfId('req_7zzzzzzzzzzzzzzzzzzzzzzzzz'), 'f'.repeat(32));
  assert.throws(() => uuidHexOfId('req_short'), RangeError);
});

test('a request joins the caller trace, or starts one named after its request id', () => {
  const requestId = newId('request');
  const uuid = uuidHexOfId(requestId);
  const own = requestTrace(requestId, {});
  assert.deepEqual(own, {
    requestId,
    clientRequestId: null,
    traceId: uuid,
    spanId: uuid.slice(16),
    parentId: null,
    flags: '01',
    tracestate: null,
  });
  assert.notEqual(own.spanId, '0'.repeat(16));

  const joined = requestTrace(requestId, { traceparent: SPEC_EXAMPLE, tracestate: 'rojo=1', 'x-request-id': 'gw-17' });
  assert.equal(joined.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(joined.parentId, '00f067aa0ba902b7');
  assert.equal(joined.spanId, uuid.slice(16), 'the service span is still its own');
  assert.equal(joined.clientRequestId, 'gw-17');
  assert.equal(joined.tracestate, 'rojo=1');
  // tracestate without a valid traceparent is not kept.
  assert.equal(requestTrace(requestId, { traceparent: 'bad', tracestate: 'rojo=1' }).tracestate, null);
  assert.match(newSpanId(), /^[0-9a-f]{16}$/);
});
