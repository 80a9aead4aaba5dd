import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { requestLoggerFactory } from './request-logger.js';

function appLogging(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const app = Fastify({
    loggerInstance: logger,
    childLoggerFactory: requestLoggerFactory,
    disableRequestLogging: true,
    genReqId: () => 'req_test',
  });
  return { app, lines };
}

test('request loggers write each enabled line with the request id, and nothing below the level', async (t) => {
  const { app, lines } = appLogging('warn');
  t.after(() => app.close());
  app.get('/', async (request) => {
    request.log.info('below the level');
    request.log.debug({ detail: 1 }, 'below the level');
    request.log.warn({ order: 'ord_1' }, 'partner slow');
    request.log.error(new Error('boom'));
    request.log.child({ step: 'routing' }).warn('from a child');
    return { level: request.log.level };
  });
  const res = await app.inject('/');
  assert.deepEqual(res.json(), { level: 'warn' });
  assert.deepEqual(
    lines.map((l) => [l.level, l.reqId, l.msg]),
    [
      [40, 'req_test', 'partner slow'],
      [50, 'req_test', 'boom'],
      [40, 'req_test', 'from a child'],
    ],
  );
  assert.equal(lines[0]?.order, 'ord_1');
  assert.equal(lines[2]?.step, 'routing');
});

test('a request logger whose level is raised logs from then on, for that request only', async (t) => {
  const { app, lines } = appLogging('warn');
  t.after(() => app.close());
  app.get('/', async (request) => {
    request.log.debug('before');
    request.log.level = 'debug';
    request.log.debug('after');
    return {};
  });
  app.get('/other', async (request) => {
    request.log.debug('other request');
    return {};
  });
  await app.inject('/');
  await app.inject('/other');
  assert.deepEqual(
    lines.map((l) => l.msg),
    ['after'],
  );
});

test("a request's lines carry the caller's request id and trace when it sent valid ones, and nothing of invalid ones", async (t) => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const app = Fastify({
    loggerInstance: logger,
    childLoggerFactory: requestLoggerFactory,
    genReqId: () => 'req_01h455vb4pex5vsknk084sn02q',
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
  });
  t.after(() => app.close());
  app.get('/', async (request) => {
    request.log.info('handled');
    return {};
  });
  await app.inject({
    url: '/',
    headers: { 'x-request-id': 'gw-17', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
  });
  await app.inject({
    url: '/',
    headers: { 'x-request-id': 'bad id', traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' },
  });
  await app.inject({ url: '/' });
  const [joined, invalid, plain] = lines.filter((l) => l.msg === 'handled');
  assert.equal(lines.length, 3);
  assert.equal(joined?.request_id, 'req_01h455vb4pex5vsknk084sn02q');
  assert.equal(joined?.client_request_id, 'gw-17');
  assert.equal(joined?.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(joined?.parent_span_id, '00f067aa0ba902b7');
  assert.match(String(joined?.span_id), /^[0-9a-f]{16}$/);
  for (const line of [invalid, plain]) {
    assert.equal(line?.request_id, 'req_01h455vb4pex5vsknk084sn02q');
    for (const key of ['client_request_id', 'trace_id', 'span_id', 'parent_span_id']) assert.equal(line?.[key], undefined, key);
  }
});
