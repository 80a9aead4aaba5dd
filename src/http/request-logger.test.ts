import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import pino from 'pino';
import { requestLoggerFactory } from './request-logger.js';

function appLogging(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const app = Fastify({ loggerInstance: logger, childLoggerFactory: requestLoggerFactory, disableRequestLogging: true, genReqId: () => 'req_test' });
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
  assert.deepEqual(lines.map((l) => l.msg), ['after']);
});
