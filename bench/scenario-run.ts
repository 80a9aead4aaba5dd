import { pinApart } from './pinning.js';
import { commitText, readPauses, type PauseReading } from './service-pauses.js';
import { measurePaced, type PacedMeasurement } from './paced.js';
import { CpuProbe } from './cpu.js';
import { measure, measureSplit, probes, type Measurement } from './load.js';
import { WireProbe } from './wire.js';
import type { Row, ScenarioResult } from './report.js';
import { REFERENCES, isRatioGoal, type BenchContext, type Scenario } from './scenarios.js';
import { WriterProbe } from './writer.js';

export const log = (message: string) => process.stdout.write(`[bench] ${message}\n`);
export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Measures one scenario of the harness: an in-process one by its own alternating run, an HTTP one
 * with autocannon against the service and each of its references in turn, and reads its goal.
 */
export async function runScenario(
  scenario: Scenario,
  ctx: BenchContext,
  settings: { connections: number; duration: number; warmup: number; rounds: number },
): Promise<ScenarioResult> {
  if (scenario.kind === 'in-process') {
    const { ours, reference } = scenario.run(ctx, { durationSeconds: settings.duration });
    const ratio = ours.rps / reference.rps;
    return {
      name: scenario.name,
      description: scenario.description,
      ours: { label: 'cauri', rps: ours.rps, p50: null, p99: null, microsPerOp: ours.microsPerOp },
      references: [
        {
          key: 'raw-ed25519',
          row: { label: scenario.referenceLabel, rps: reference.rps, p50: null, p99: null, microsPerOp: reference.microsPerOp },
          ratio,
        },
      ],
      ...(scenario.goal === undefined
        ? {}
        : { goal: { ...scenario.goal, label: scenario.referenceLabel, actual: ratio, met: ratio >= scenario.goal.ratio } }),
      note:
        `The two sides alternated in 100 ms slices; each rate is a side's verifications over its own time. ` +
        `Verifications per second per quarter of the run: ours ${ours.quarters.map((r) => Math.round(r)).join(', ')}; ` +
        `raw ${reference.quarters.map((r) => Math.round(r)).join(', ')}.`,
    };
  }
  // Ours and each reference in turn, `rounds` times (each run duration / rounds seconds, the warm-up
  // only before the first), so that drift of a noisy machine hits every side alike.
  const sides = [
    { key: 'ours', label: 'cauri', target: scenario.target(ctx), split: scenario.targets?.(ctx) },
    ...scenario.references.map((key) => ({ key, label: REFERENCES[key].label, target: REFERENCES[key].target(ctx), split: undefined })),
  ];
  const cpuGroups = scenario.cpu?.(ctx);
  const cpu = new Map(sides.map((side) => [side.key, cpuGroups === undefined ? undefined : new CpuProbe(cpuGroups)]));
  const runs = new Map<string, Measurement[]>(sides.map((s) => [s.key, []]));
  const duration = Math.max(1, Math.round(settings.duration / settings.rounds));
  const writer = scenario.writer === undefined ? undefined : new WriterProbe(scenario.writer(ctx));
  const wire = scenario.wire === undefined ? undefined : new WireProbe(scenario.wire(ctx));
  for (let round = 0; round < settings.rounds; round++) {
    for (const side of sides) {
      const label = `${scenario.name} / ${side.key} / round ${round + 1}`;
      const sideProbe =
        side.key === 'ours' && writer !== undefined ? writer : probes(cpu.get(side.key), side.key === 'ours' ? wire : undefined);
      const load = { connections: scenario.connections ?? settings.connections, duration, warmup: round === 0 ? settings.warmup : 0 };
      const measured =
        side.split === undefined
          ? await measure(label, side.target, load, sideProbe)
          : await measureSplit(label, side.split, load, sideProbe);
      log(`    round ${round + 1}, ${side.key}: ${measured.rps.toFixed(0)}/s`);
      runs.get(side.key)?.push(measured);
      await pause(500);
    }
  }
  const combine = (label: string, list: Measurement[]): Row => ({
    label,
    rps: list.reduce((a, m) => a + m.rps, 0) / list.length,
    p50: Math.max(...list.map((m) => m.p50)),
    p99: Math.max(...list.map((m) => m.p99)),
  });
  const ours = combine('cauri', runs.get('ours') ?? []);
  // A latency goal read at a fraction of the maximum: one more run of ours, held at that rate.
  let held: { rate: number; measured: PacedMeasurement; pauses: PauseReading | null; pinned: boolean } | undefined;
  const heldGoal =
    scenario.goal !== undefined && !isRatioGoal(scenario.goal) && scenario.goal.atFractionOfMax !== undefined
      ? { p99Ms: scenario.goal.p99Ms, atFractionOfMax: scenario.goal.atFractionOfMax }
      : scenario.latencyGoal;
  if (heldGoal !== undefined) {
    const rate = ours.rps * heldGoal.atFractionOfMax;
    await pause(500);
    const origin = new URL(sides[0]!.target.url ?? '').origin;
    const servicePid = ctx.pids[origin];
    const pinning = servicePid === undefined ? null : pinApart(servicePid);
    try {
      const pauses = await readPauses(origin);
      const measured = await measurePaced(`${scenario.name} / ours at ${Math.round(rate)}/s`, sides[0]!.target, {
        connections: scenario.connections ?? settings.connections,
        duration: settings.duration,
        rate,
        ...(scenario.latencyGoal?.freshUuidHeader === undefined ? {} : { freshUuidHeader: scenario.latencyGoal.freshUuidHeader }),
      });
      log(`    ours held at ${rate.toFixed(0)}/s: ${measured.rps.toFixed(0)}/s, p50 ${measured.p50} ms, p99 ${measured.p99} ms`);
      held = { rate, measured, pauses: await pauses(), pinned: pinning !== null };
    } finally {
      pinning?.restore();
    }
  }
  const references: ScenarioResult['references'] = sides.slice(1).map((side) => {
    const row = combine(side.label, runs.get(side.key) ?? []);
    return { key: side.key, row, ratio: ours.rps / row.rps };
  });
  const ratioGoal = scenario.goal !== undefined && isRatioGoal(scenario.goal) ? scenario.goal : undefined;
  const goalRef = ratioGoal === undefined ? undefined : references.find((r) => r.key === ratioGoal.of);
  const heldNote =
    held === undefined
      ? undefined
      : heldRateNote(held, ours.rps, ours.p99, settings.duration, scenario.connections ?? settings.connections);
  const label = (key: string) => (key === 'ours' ? (scenario.cpuLabel ?? 'cauri') : REFERENCES[key as keyof typeof REFERENCES].short);
  const answeredBy = (key: string) => (runs.get(key) ?? []).reduce((a, m) => a + m.ok, 0);
  const cpuNote =
    cpuGroups === undefined
      ? undefined
      : 'Cores kept busy on average during the measured runs (2.00 would be both cores of this machine all the time; PostgreSQL and Redis count every process of that name on the machine): ' +
        sides.map((side) => `${label(side.key)}: ${cpu.get(side.key)?.summary() ?? ''}`).join('; ') +
        '. The same as CPU time for each request answered: ' +
        sides.map((side) => `${label(side.key)}: ${cpu.get(side.key)?.perRequest(answeredBy(side.key)) ?? ''}`).join('; ') +
        '.';
  const writerNote =
    writer === undefined
      ? cpuNote
      : writer.note(
          answeredBy('ours'),
          ratioGoal === undefined || goalRef === undefined
            ? undefined
            : {
                ratio: ratioGoal.ratio,
                referenceRps: goalRef.row.rps,
                referenceLabel: REFERENCES[goalRef.key as keyof typeof REFERENCES].short,
              },
        );
  const goal: ScenarioResult['goal'] =
    scenario.goal === undefined
      ? undefined
      : isRatioGoal(scenario.goal)
        ? goalRef === undefined
          ? undefined
          : { ...scenario.goal, label: goalRef.row.label, actual: goalRef.ratio, met: goalRef.ratio >= scenario.goal.ratio }
        : (() => {
            const p99 = held?.measured.p99 ?? ours.p99 ?? Number.POSITIVE_INFINITY;
            return { ...scenario.goal, label: 'p99', actual: p99, met: p99 <= scenario.goal.p99Ms };
          })();
  const wireNote = wire?.note(answeredBy('ours'));
  const note = [wireNote, writerNote, heldNote].filter((n) => n !== undefined).join('\n\n') || undefined;
  return {
    name: scenario.name,
    description: scenario.description,
    ours,
    references,
    ...(scenario.connections === undefined ? {} : { connections: scenario.connections }),
    ...(note === undefined ? {} : { note }),
    ...(goal === undefined ? {} : { goal }),
    ...(scenario.latencyGoal === undefined || held === undefined
      ? {}
      : {
          otherGoals: [
            {
              goal: `p99 ≤ ${scenario.latencyGoal.p99Ms} ms at ${Math.round(scenario.latencyGoal.atFractionOfMax * 100)} % of the maximum rate`,
              measured: `p99 ${held.measured.p99} ms (see the note below)`,
              met: held.measured.p99 <= scenario.latencyGoal.p99Ms,
            },
          ],
        }),
  };
}

/** What the latency read below the maximum rate measured, and what paused either side meanwhile. */
function heldRateNote(
  held: { rate: number; measured: PacedMeasurement; pauses: PauseReading | null; pinned: boolean },
  maxRps: number,
  maxP99: number | null,
  duration: number,
  connections: number,
): string {
  const { measured, pauses } = held;
  const sentences = [
    `Latency goal read at ${Math.round((held.rate / maxRps) * 100)} % of the measured maximum: ours sent ${Math.round(held.rate).toLocaleString('en-US')} requests a second, evenly spaced, ` +
      `for ${duration} s after a 2 s warm-up at that rate, over at most ${connections} connections (latency counted from each request's due time), and answered ${Math.round(measured.rps).toLocaleString('en-US')} a second, p50 ${measured.p50} ms, p99 ${measured.p99} ms.`,
    held.pinned
      ? "During that read the service had the first core to itself and the harness (the load generator's thread with it) the other: on two shared cores, a request due while the generator held the core the service needed waited out a scheduler's time slice, counted as the service's latency, which a client on another machine never causes."
      : 'The service and the load generator shared the cores during that read.',
    `The load generator's own event loop ran late by at most ${measured.generatorDelay.max} ms (p99 ${measured.generatorDelay.p99} ms).`,
  ];
  if (pauses !== null) {
    sentences.push(
      `In the service meanwhile: the event loop ran late by at most ${pauses.loopMaxMs} ms (p99 ${pauses.loopP99Ms} ms); the garbage collector paused ${pauses.pauses} times, ${pauses.pausesMs} ms in all, ${pauses.longPauses} of them 10 ms or longer; ${commitText(pauses)}.`,
    );
  }
  sentences.push(
    `At the maximum rate the p99 (${maxP99} ms, the worst round's) is mostly time spent queueing behind the other connections.`,
  );
  return sentences.join(' ');
}
