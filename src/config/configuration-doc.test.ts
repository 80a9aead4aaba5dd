import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ConfigError, parseConfig } from './config.js';

// docs/configuration.md is where operators learn every variable, its default and its range.
const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');

interface Row {
  readonly name: string;
  readonly fallback: string;
  readonly meaning: string;
}

const rows: Row[] = doc
  .split('\n')
  .filter((line) => /^\| `[A-Z][A-Z0-9_]*` \|/.test(line))
  .map((line) => {
    const [name = '', fallback = '', meaning = ''] = line.split(' | ').map((cell) => cell.replace(/^\| /, '').replace(/ \|$/, '').trim());
    return { name: name.replace(/`/g, ''), fallback, meaning };
  });

/** What each row must be read with: the EVM variables only count with the EVM anchor. */
const EVM = {
  CAURI_ANCHOR: 'evm',
  CAURI_EVM_RPC_URL: 'http://127.0.0.1:8545',
  CAURI_EVM_PRIVATE_KEY: 'ab'.repeat(32),
  CAURI_EVM_CHAIN_NAME: 'local',
};
const base = (name: string): Record<string, string> => (name.startsWith('CAURI_EVM_') ? { ...EVM } : {});

/** A literal default: one backticked value, not a phrase such as "`true` in sandbox" or a pattern such as `http://HOST:PORT`. */
const literal = (fallback: string): string | undefined => {
  const value = /^`([^`\s]+)`$/.exec(fallback)?.[1];
  return value?.includes('HOST') ? undefined : value;
};

const ROOM: Record<string, Record<string, string>> = {
  CAURI_HTTP_HEADERS_TIMEOUT_MS: { CAURI_HTTP_REQUEST_TIMEOUT_MS: '3600000' },
  CAURI_HTTP_REQUEST_TIMEOUT_MS: { CAURI_HTTP_HEADERS_TIMEOUT_MS: '100' },
};

test('docs/configuration.md lists every variable the configuration reads', () => {
  const read = new Set<string>();
  const recording = (env: Record<string, string>) =>
    new Proxy(env, {
      get: (target, key) => {
        if (typeof key === 'string') read.add(key);
        return target[key as string];
      },
    });
  parseConfig(recording({}));
  parseConfig(recording({ ...EVM }));
  const documented = new Set(rows.map((row) => row.name));
  assert.deepEqual(
    [...read].filter((name) => !documented.has(name)),
    [],
  );
});

test('each default docs/configuration.md gives is the one the service applies when the variable is unset', () => {
  const checked: string[] = [];
  for (const row of rows) {
    const value = literal(row.fallback);
    if (value === undefined) continue;
    assert.deepEqual(parseConfig({ ...base(row.name), [row.name]: value }), parseConfig(base(row.name)), `${row.name} = ${value}`);
    checked.push(row.name);
  }
  assert.ok(checked.length >= 30, `only ${checked.length} literal defaults found`);
});

test('each number docs/configuration.md gives a range is accepted at both ends and refused just outside them', () => {
  for (const row of rows) {
    if (!/^`\d+`$/.test(row.fallback)) continue;
    const range = /\b(\d[\d,]*) to (\d[\d,]*)\b/.exec(row.meaning);
    assert.ok(range !== null, `${row.name}: the row states its range`);
    const [min, max] = [range[1], range[2]].map((n) => Number((n as string).replace(/,/g, ''))) as [number, number];
    const at = (n: number) => () => parseConfig({ ...base(row.name), [row.name]: String(n) });
    const refused = (e: unknown) => e instanceof ConfigError && e.variable === row.name;
    // The headers time-out may not exceed the whole request's: the other one makes room meanwhile.
    const roomy = ROOM[row.name] ?? {};
    const within = (n: number) => () => parseConfig({ ...base(row.name), ...roomy, [row.name]: String(n) });
    assert.doesNotThrow(within(min), `${row.name} = ${min}`);
    assert.doesNotThrow(within(max), `${row.name} = ${max}`);
    if (min > 0) assert.throws(at(min - 1), refused, `${row.name} = ${min - 1}`);
    assert.throws(within(max + 1), refused, `${row.name} = ${max + 1}`);
  }
});
