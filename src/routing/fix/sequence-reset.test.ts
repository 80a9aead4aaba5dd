import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sequenceReset } from './sequence-reset.js';

test('a SequenceReset-Reset moves the number forward only: one below the number expected is refused', () => {
  assert.deepEqual(sequenceReset({ seq: 9, newSeqNo: 20, gapFill: false }, 9), { kind: 'follow', askFor: null });
  assert.deepEqual(
    sequenceReset({ seq: 3, newSeqNo: 9, gapFill: false }, 9),
    { kind: 'follow', askFor: null },
    'the number expected: nothing to do',
  );
  assert.deepEqual(sequenceReset({ seq: 9, newSeqNo: 2, gapFill: false }, 9), {
    kind: 'refuse',
    text: 'NewSeqNo (36) 2 is below the 9 expected: a SequenceReset cannot lower the sequence',
  });
  assert.equal(sequenceReset({ seq: 9, newSeqNo: Number.NaN, gapFill: false }, 9).kind, 'refuse');
});

test('a SequenceReset-GapFill: NewSeqNo above its own number, the gap before it asked for at once, a stale copy followed harmlessly', () => {
  assert.deepEqual(sequenceReset({ seq: 9, newSeqNo: 12, gapFill: true }, 9), { kind: 'follow', askFor: null });
  assert.deepEqual(sequenceReset({ seq: 12, newSeqNo: 15, gapFill: true }, 9), { kind: 'follow', askFor: { begin: 9, end: 11 } });
  assert.deepEqual(
    sequenceReset({ seq: 3, newSeqNo: 5, gapFill: true }, 9),
    { kind: 'follow', askFor: null },
    'a resend inside a gap, or a copy',
  );
  assert.deepEqual(sequenceReset({ seq: 9, newSeqNo: 9, gapFill: true }, 9), {
    kind: 'refuse',
    text: 'NewSeqNo (36) 9 of a gap fill must be above its MsgSeqNum 9',
  });
  assert.equal(sequenceReset({ seq: 9, newSeqNo: 4, gapFill: true }, 9).kind, 'refuse');
});
