import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CalendarEntry } from '../../src/markets/calendar-file.js';
import { readShippedCalendars } from '../../src/markets/shipped-calendars.js';
import { runCli } from '../support/process.js';

type Json = Record<string, any>;

function deployment(t: TestContext): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-calendars-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, env: { CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SQLITE_SYNCHRONOUS: 'NORMAL' } };
}

async function json(args: string[], env: Record<string, string>): Promise<any> {
  const { code, stdout, stderr } = await runCli([...args, '--json'], env);
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout) as unknown;
}

const gse = readShippedCalendars().find((f) => f.file === 'GSE.json')?.content as CalendarEntry;

test('cauri calendars: list the shipped years, refuse a bad file whole, import a good one, show it', { timeout: 180_000 }, async (t) => {
  const { dir, env } = deployment(t);
  const listed = (await json(['calendars', 'list'], env)) as Json[];
  assert.deepEqual(
    listed.map((r) => `${r.exchange} ${r.year} ${r.origin}`),
    ['BRVM 2026 shipped', 'BRVM 2027 shipped', 'BVMAC 2026 shipped', 'BVMAC 2027 shipped', 'GSE 2026 shipped', 'GSE 2027 shipped'],
  );
  assert.ok(listed.every((r) => typeof r.source === 'string' && r.provisional > 0));

  // The first entry is good, the second is not: nothing is written, and the refusal says where.
  const good = {
    ...gse,
    years: [2026],
    days: [...gse.days.filter((d) => d.date.startsWith('2026-')), { date: '2026-11-26', name: 'Exceptional closure' }],
  };
  const bad = {
    ...gse,
    exchange: 'BRVM',
    years: [2027],
    timetables: { normal: [{ name: 'continuous', start: '15:00:00', end: '10:00:00' }] },
    days: [{ date: '2026-12-25', name: 'Christmas' }],
  };
  writeFileSync(join(dir, 'bad.json'), JSON.stringify([good, bad], null, 2));
  const refused = await runCli(['calendars', 'import', join(dir, 'bad.json')], env);
  assert.equal(refused.code, 1);
  assert.match(refused.stdout, /^entry 1: rejected: timetables\.normal\.0\.end phase_end/m);
  assert.match(refused.stdout, /^entry 1: rejected: days\.0\.date year/m);
  assert.doesNotMatch(refused.stdout, /^entry 0/m);
  assert.match(refused.stdout, /Nothing was written/);
  assert.deepEqual(await json(['calendars', 'list'], env), listed);

  writeFileSync(join(dir, 'broken.json'), '{\n  "exchange": "GSE",\n  "years" [2026]\n}\n');
  const broken = await runCli(['calendars', 'import', join(dir, 'broken.json')], env);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /broken\.json is not valid JSON at line 3, column 11: /);

  writeFileSync(join(dir, 'good.json'), JSON.stringify(good));
  const imported = await runCli(['calendars', 'import', join(dir, 'good.json')], env);
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stdout, /^entry 0: updated GSE 2026$/m);
  const after = (await json(['calendars', 'list'], env)) as Json[];
  assert.deepEqual(after.find((r) => r.exchange === 'GSE' && r.year === 2026)?.origin, 'import');
  const shown = (await json(['calendars', 'show', 'gse', '--year', '2026'], env)) as Json[];
  assert.deepEqual(
    shown.map((y) => y.year),
    [2026],
  );
  assert.ok(shown[0]?.days.some((d: Json) => d.date === '2026-11-26' && d.timetable === null));
  const text = await runCli(['calendars', 'show', 'GSE', '--year', '2026'], env);
  assert.match(text.stdout, /^2026-11-26 +Thu +closed +Exceptional closure$/m);
  assert.match(text.stdout, /^2026-03-20 +Fri +closed +yes +Eid al-Fitr$/m);

  // The migration command applies the shipped calendars where missing, and leaves the import alone.
  assert.deepEqual((await json(['migrate'], env)).calendars, []);
});

test('cauri markets clock: one exchange or all, as text or JSON', { timeout: 120_000 }, async (t) => {
  const { env } = deployment(t);
  const all = (await json(['markets', 'clock'], env)) as Json[];
  assert.deepEqual(
    all.map((c) => c.exchange),
    ['BRVM', 'BVMAC', 'GSE'],
  );
  for (const c of all) {
    assert.deepEqual(Object.keys(c), ['exchange', 'timestamp', 'phase', 'is_open', 'next_open', 'next_close']);
    assert.equal(c.is_open, c.phase !== 'closed');
    assert.ok(Date.parse(c.next_open) > Date.parse(c.timestamp) && Date.parse(c.next_close) > Date.parse(c.timestamp));
  }
  const one = (await json(['markets', 'clock', 'bvmac'], env)) as Json;
  assert.equal(one.exchange, 'BVMAC');
  const text = await runCli(['markets', 'clock', 'GSE'], env);
  assert.match(text.stdout, /^exchange +phase +is_open +next_open +next_close\nGSE +\w+ +(true|false) +\d{4}-/);
  const unknown = await runCli(['markets', 'clock', 'NYSE'], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown exchange NYSE/);
});
