import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser } from './sse-parser.js';

// The rules of "Interpreting an event stream" (HTML Living Standard §9.2.6), each fed whole and
// fed one character at a time: a chunk boundary anywhere must change nothing.
function parse(chunks: string[], start?: string) {
  const parser = new SseParser(start);
  const events = chunks.flatMap((c) => parser.push(c)).map((m) => [m.type, m.data, m.lastEventId]);
  return { events, lastEventId: parser.lastEventId, retryMs: parser.retryMs, comments: parser.comments };
}
function both(text: string, start?: string) {
  const whole = parse([text], start);
  assert.deepEqual(parse([...text], start), whole, `one character a chunk: ${JSON.stringify(text)}`);
  return whole;
}

test('line endings: LF, CRLF and CR alike, mixed, and a CR ending a chunk ends its line at once', () => {
  for (const eol of ['\n', '\r\n', '\r']) {
    assert.deepEqual(both(`id: 1${eol}event: a${eol}data: x${eol}${eol}`).events, [['a', 'x', '1']], JSON.stringify(eol));
  }
  assert.deepEqual(both('data: a\r\ndata: b\rdata: c\n\r').events, [['message', 'a\nb\nc', '']]);
  const parser = new SseParser();
  assert.deepEqual(parser.push('data: x\r'), []);
  assert.deepEqual(
    parser.push('\r').map((m) => m.data),
    ['x'],
    'dispatched without waiting for the next chunk',
  );
  assert.deepEqual(
    parser.push('\ndata: y\n\n').map((m) => m.data),
    ['y'],
    'an LF that begins the next chunk is the second half of that CR, not a blank line',
  );
  assert.deepEqual(both('data: x\r\r\n').events, [['message', 'x', '']], 'CR, then CRLF: a line, then a blank line');
});

test('fields: data lines joined with LF, one leading space dropped, no colon means an empty value, comments', () => {
  assert.deepEqual(both('data:a\ndata:  b\ndata\ndata:\n\n').events, [['message', 'a\n b\n\n', '']]);
  assert.deepEqual(both('data: {"a":\ndata: 1}\n\n').events, [['message', '{"a":\n1}', '']]);
  const r = both(': ping\n:\n\n: another\ndata: x\n\n');
  assert.deepEqual(r.events, [['message', 'x', '']]);
  assert.equal(r.comments, 3);
  assert.deepEqual(both('Data: x\nDATA: y\nfoo: bar\n\n').events, [], 'field names are case-sensitive; unknown ones ignored');
  assert.deepEqual(both('event: a\n\ndata: x\n\n').events, [['message', 'x', '']], 'the type is reset at every blank line');
  assert.deepEqual(both('data: x').events, [], 'an event the stream ends inside is not dispatched');
  assert.deepEqual(both('data: x\n').events, []);
});

test('id: persists across events, set at dispatch even without data, ignored with U+0000, empty resets it', () => {
  const r = both('id: 1\ndata: a\n\ndata: b\n\nid: 2\n\nid: 3\ndata: c\n');
  assert.deepEqual(r.events, [
    ['message', 'a', '1'],
    ['message', 'b', '1'],
  ]);
  assert.equal(r.lastEventId, '2', 'the id-only block moved the position; the unfinished one did not');
  assert.deepEqual(both('id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n').events, [
    ['message', 'a', '1'],
    ['message', 'b', '1'],
  ]);
  assert.equal(both('id: 1\n\nid\n\n').lastEventId, '');
  assert.equal(both(': connected\n\n', 'evt_9').lastEventId, 'evt_9', 'a new connection starts from the previous position');
  assert.deepEqual(both('data: a\n\n', 'evt_9').events, [['message', 'a', 'evt_9']]);
});

test('retry: only all ASCII digits set the reconnection time', () => {
  assert.equal(both('retry: 2500\n\n').retryMs, 2500);
  for (const bad of ['retry: 2.5\n', 'retry: -1\n', 'retry: 1s\n', 'retry:\n', 'retry:  5\n']) assert.equal(both(bad).retryMs, null, bad);
  assert.equal(both('retry: 10\nretry: x\n').retryMs, 10, 'an invalid value leaves the last valid one');
});
