import { commitText } from './service-pauses.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FixBenchResult, LatencyFigures } from './fix.js';
import type { ScenarioResult } from './report.js';
import { FIX_SCENARIO } from './scenarios.js';

const FIX_BENCH = fileURLToPath(new URL('./fix.js', import.meta.url));

/** The scenario cannot run here (no root for the network namespace, or no QuickFIX): reported, not failed. */
export class NotRunnable extends Error {}

const fmt = (ms: number) => (ms >= 100 ? `${Math.round(ms)} ms` : `${ms.toFixed(1)} ms`);

function latencyRow(label: string, f: LatencyFigures): string {
  return `| ${label} | ${f.orders} | ${fmt(f.postToRouted.p50)} / ${fmt(f.postToRouted.p99)} | ${fmt(f.createdToRouted.p50)} / ${fmt(f.createdToRouted.p99)} | ${fmt(f.roundTrip.p50)} / ${fmt(f.roundTrip.p99)} | ${fmt(f.postToExecuted.p50)} / ${fmt(f.postToExecuted.p99)} |`;
}

/**
 * Runs bench/fix.ts inside a new network namespace whose one interface is loopback (`unshare -n`, as
 * the FIX tests do) and turns its figures into the report's scenario.
 */
export async function runFixScenario(
  settings: { connections: number; duration: number; warmup: number; rounds: number },
  cpuProfDir: string | null,
  dataDir: string,
): Promise<ScenarioResult> {
  if (process.getuid?.() !== 0)
    throw new NotRunnable(
      "not measured: it needs root, for a network namespace that has only loopback (unshare -n), where QuickFIX's executor may listen",
    );
  const output = join(dataDir, 'fix-figures.json');
  const env = {
    ...process.env,
    BENCH_FIX_OUTPUT: output,
    BENCH_CONNECTIONS: String(settings.connections),
    BENCH_DURATION: String(settings.duration),
    BENCH_ROUNDS: String(settings.rounds),
    BENCH_WARMUP: String(settings.warmup),
    ...(cpuProfDir === null ? {} : { BENCH_CPU_PROF: cpuProfDir }),
  };
  const child = spawn(
    'unshare',
    ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, '--enable-source-maps', FIX_BENCH],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => process.stdout.write(chunk));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', (error) => {
      errors += String(error);
      resolve(null);
    });
    child.on('close', resolve);
  });
  if (code !== 0) {
    if (/quickfix|libquickfix/i.test(errors) && /missing/.test(errors)) throw new NotRunnable(`not measured: ${errors.trim()}`);
    throw new Error(`bench/fix.ts exited with ${code}:\n${errors.trim()}`);
  }
  const figures = JSON.parse(readFileSync(output, 'utf8')) as FixBenchResult;
  const ratio = figures.fix.rps / figures.sandbox.rps;
  const handOver = figures.latency.fix.postToRouted.p99;
  const lf = figures.latency;
  return {
    name: FIX_SCENARIO.name,
    description: FIX_SCENARIO.description,
    ours: { label: 'cauri, FIX connector', rps: figures.fix.rps, p50: figures.fix.p50, p99: figures.fix.p99 },
    references: [
      {
        key: 'sandbox-connector',
        row: {
          label: 'cauri, sandbox connector (the same order to the simulated SGI, same service)',
          rps: figures.sandbox.rps,
          p50: figures.sandbox.p50,
          p99: figures.sandbox.p99,
        },
        ratio,
      },
    ],
    goal: { ...FIX_SCENARIO.goal, label: 'sandbox connector', actual: ratio, met: ratio >= FIX_SCENARIO.goal.ratio },
    otherGoals: [
      {
        goal: `p99 hand-over (POST sent to \`order.routed\`) under ${FIX_SCENARIO.handOverP99Ms} ms on loopback`,
        measured: fmt(handOver),
        met: handOver < FIX_SCENARIO.handOverP99Ms,
      },
    ],
    note: [
      `Rounds (req/s): FIX ${figures.fix.rounds.map((r) => Math.round(r)).join(', ')}; sandbox ${figures.sandbox.rounds.map((r) => Math.round(r)).join(', ')}. The FIX session carried ${figures.fixMessages.sent.toLocaleString('en-US')} messages out and ${figures.fixMessages.received.toLocaleString('en-US')} in over the run.`,
      '',
      `After each round the next one waits until every order of it is executed, so that no round applies the other side's fills. Seconds from the end of each round to its last order executed: FIX ${drainList(figures.fix.drains)}; sandbox ${drainList(figures.sandbox.drains)} (the simulated market fills about a second after it takes an order, and the routing worker applies the sandbox's fills from its log, while the FIX gateway's fills are applied in the transaction that records them). Counting that time, orders carried through to execution a second: FIX ${Math.round(figures.fix.executedRps).toLocaleString('en-US')}, sandbox ${Math.round(figures.sandbox.executedRps).toLocaleString('en-US')} (${Math.round((100 * figures.fix.executedRps) / figures.sandbox.executedRps)} %).`,
      '',
      `Hand-over, one order at a time on the otherwise idle service, ${lf.fix.orders} orders to each partner, alternating (p50 / p99; from the moment the POST is sent to the order's event's \`created_at\`, same machine clock, 1 ms resolution; \`order.created\` to \`order.routed\` is inside the service; the round trip is the POST's answer, which comes once the partner acknowledged the order):`,
      '',
      '| Connector | Orders | POST to `order.routed` | `order.created` to `order.routed` | POST round trip | POST to `order.executed` |',
      '|---|---:|---:|---:|---:|---:|',
      latencyRow('FIX', lf.fix),
      latencyRow('sandbox', lf.sandbox),
      '',
      `\`order.executed\`: the FIX gateway's fill is applied to the order in the transaction that records it; the sandbox's comes from its simulated market, about a second after it takes the order, through the routing worker, which reads the partners' report logs every 250 ms. The hand-over is what the goal bounds.`,
      ...(figures.probePauses === null
        ? []
        : [
            '',
            `During those orders, in the service: the event loop ran late by at most ${figures.probePauses.loopMaxMs} ms (p99 ${figures.probePauses.loopP99Ms} ms); the garbage collector paused ${figures.probePauses.pauses} times, ${figures.probePauses.pausesMs} ms in all, ${figures.probePauses.longPauses} of them 10 ms or longer; ${commitText(figures.probePauses)}.`,
          ]),
      '',
      `FIX, under load: ${figures.fix.writerNote}`,
      '',
      `Sandbox, under load: ${figures.sandbox.writerNote}`,
    ].join('\n'),
  };
}

const drainList = (drains: readonly number[]) => drains.map((d) => d.toFixed(1)).join(', ');
