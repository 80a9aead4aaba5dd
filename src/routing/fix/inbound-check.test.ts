import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkApplicationMessage, foreignHeader, garbled, SESSION_REJECT_REASON } from './inbound-check.js';

const FIX44 = new Set(['8', '9', '3', 'j', 'B', 'D']);
const isFix44 = (type: string) => FIX44.has(type);

function reader(fields: Record<number, string>) {
  return (tag: number) => fields[tag] ?? null;
}

const TRADE = { 17: 'E-1', 150: 'F', 32: '10', 31: '15000.5', 60: '20261124-10:00:00.123', 38: '10', 44: '15000' };

test('a message is garbled when its CheckSum does not match or its MsgSeqNum is not a number', () => {
  assert.equal(garbled(reader({ 34: '12', 10: '042' }), 42), null);
  assert.match(garbled(reader({ 34: '12', 10: '043' }), 42) ?? '', /CheckSum \(10\) 043, computed 042/);
  assert.match(garbled(reader({ 34: '12', 10: '42' }), 42) ?? '', /CheckSum/, 'three digits');
  assert.match(garbled(reader({ 34: '12' }), 42) ?? '', /CheckSum \(10\) missing/);
  assert.match(garbled(reader({ 34: 'x1', 10: '042' }), 42) ?? '', /MsgSeqNum \(34\) 'x1'/);
  assert.match(garbled(reader({ 10: '042' }), 42) ?? '', /MsgSeqNum \(34\) missing/);
});

test('an ExecutionReport the connector can read passes; so does any other FIX 4.4 message', () => {
  assert.equal(checkApplicationMessage('8', reader(TRADE), isFix44), null);
  assert.equal(checkApplicationMessage('8', reader({ 17: 'E-2', 150: '0' }), isFix44), null, 'a New needs no LastQty or LastPx');
  assert.equal(checkApplicationMessage('8', reader({ ...TRADE, 9999: 'a field of the gateway' }), isFix44), null);
  for (const type of ['9', '3', 'j', 'B']) assert.equal(checkApplicationMessage(type, reader({}), isFix44), null, type);
});

test('a message that is not FIX 4.4, or an ExecutionReport lacking what the connector reads, is refused with the reason and the field', () => {
  const refused = (type: string, fields: Record<number, string>) => {
    const rejection = checkApplicationMessage(type, reader(fields), isFix44);
    return rejection === null ? null : [rejection.reason, rejection.tag];
  };
  const without = (tag: number) => Object.fromEntries(Object.entries(TRADE).filter(([t]) => Number(t) !== tag));
  assert.deepEqual(refused('ZZ', {}), [SESSION_REJECT_REASON.invalidMsgType, null]);
  assert.deepEqual(refused('8', without(17)), [SESSION_REJECT_REASON.requiredTagMissing, 17]);
  assert.deepEqual(refused('8', without(150)), [SESSION_REJECT_REASON.requiredTagMissing, 150]);
  assert.deepEqual(refused('8', without(32)), [SESSION_REJECT_REASON.requiredTagMissing, 32]);
  assert.deepEqual(refused('8', without(31)), [SESSION_REJECT_REASON.requiredTagMissing, 31]);
  assert.deepEqual(refused('8', { ...TRADE, 150: 'Q' }), [SESSION_REJECT_REASON.valueIncorrect, 150]);
  assert.deepEqual(
    refused('8', { ...TRADE, 150: 'constructor' }),
    [SESSION_REJECT_REASON.valueIncorrect, 150],
    'only ExecType values, not object keys',
  );
  assert.deepEqual(refused('8', { ...TRADE, 32: 'ten' }), [SESSION_REJECT_REASON.incorrectDataFormat, 32]);
  assert.deepEqual(refused('8', { ...TRADE, 31: '15,000' }), [SESSION_REJECT_REASON.incorrectDataFormat, 31]);
  assert.deepEqual(refused('8', { ...TRADE, 38: '1e3' }), [SESSION_REJECT_REASON.incorrectDataFormat, 38]);
  assert.deepEqual(refused('8', { ...TRADE, 44: 'NaN' }), [SESSION_REJECT_REASON.incorrectDataFormat, 44]);
  assert.deepEqual(refused('8', { ...TRADE, 60: '2026-11-24T10:00:00Z' }), [SESSION_REJECT_REASON.incorrectDataFormat, 60]);
  assert.deepEqual(refused('8', { ...TRADE, 60: '20261324-10:00:00' }), [SESSION_REJECT_REASON.incorrectDataFormat, 60], 'month 13');
  assert.equal(refused('8', { ...TRADE, 60: '20261124-10:00:00' }), null, 'seconds without a fraction are FIX too');
  const text = checkApplicationMessage('8', reader(without(17)), isFix44)?.text;
  assert.equal(text, 'ExecID (17) is required');
});

test('a Trade whose LastPx is zero or under half a cent, or whose LastQty is not a positive whole number, is refused: no fill at 0 cents, none of a fraction of a share', () => {
  const refused = (fields: Record<number, string>) => {
    const rejection = checkApplicationMessage('8', reader({ ...TRADE, ...fields }), isFix44);
    return rejection === null ? null : [rejection.reason, rejection.tag];
  };
  assert.deepEqual(refused({ 31: '0.004' }), [SESSION_REJECT_REASON.valueIncorrect, 31]);
  assert.deepEqual(refused({ 31: '0' }), [SESSION_REJECT_REASON.valueIncorrect, 31]);
  assert.deepEqual(refused({ 31: '-15000' }), [SESSION_REJECT_REASON.valueIncorrect, 31]);
  assert.equal(refused({ 31: '0.005' }), null, 'half a cent rounds up to 1 cent');
  assert.equal(refused({ 31: '15000.004' }), null, 'a fraction of a cent on a positive price rounds as usual');
  assert.deepEqual(refused({ 32: '0' }), [SESSION_REJECT_REASON.valueIncorrect, 32]);
  assert.deepEqual(refused({ 32: '2.5' }), [SESSION_REJECT_REASON.valueIncorrect, 32]);
  assert.deepEqual(refused({ 32: '-4' }), [SESSION_REJECT_REASON.valueIncorrect, 32]);
  assert.equal(refused({ 32: '10.000' }), null, 'a whole number written with decimals');
  assert.equal(
    checkApplicationMessage('8', reader({ ...TRADE, 31: '0.004' }), isFix44)?.text,
    "LastPx (31) '0.004' is not a positive price in cents (under half a cent rounds to 0)",
  );
  assert.equal(checkApplicationMessage('8', reader({ 17: 'E-3', 150: '0', 31: '0', 32: '0' }), isFix44), null, 'only a Trade is a fill');
});

test("a message of another session (BeginString, or CompIDs not this session's) ends the session: a Reject 373=9 for the CompIDs, then a Logout", () => {
  const session = { beginString: 'FIX.4.4', senderCompId: 'CAURI', targetCompId: 'SGI' };
  const header = { 8: 'FIX.4.4', 49: 'SGI', 56: 'CAURI' };
  assert.equal(foreignHeader(reader(header), session), null);
  assert.deepEqual(foreignHeader(reader({ ...header, 8: 'FIX.4.2' }), session), { reject: null, logout: 'Incorrect BeginString FIX.4.2' });
  assert.deepEqual(foreignHeader(reader({ ...header, 49: 'OTHER' }), session), {
    reject: { reason: SESSION_REJECT_REASON.compIdProblem, tag: 49, text: "SenderCompID (49) 'OTHER' is not SGI" },
    logout: 'CompID problem',
  });
  assert.deepEqual(foreignHeader(reader({ ...header, 56: 'SOMEONE' }), session)?.reject?.tag, 56);
});
