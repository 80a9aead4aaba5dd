/**
 * Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=dir npm run bench`): the top frames by self
 * time, self time per package or source folder, and the top frames by total (inclusive) time.
 *
 *   node dist/bench/profile-summary.js <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? '25');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

// Self time per node, from the samples and their time deltas.
const selfTime = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i] as number;
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const total = [...selfTime.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^.*\/dist\//, 'dist/');
const frameKey = (f: CallFrame) =>
  `${f.functionName || '(anonymous)'} ${f.url === '' ? '' : `${shortUrl(f.url)}:${f.lineNumber + 1}`}`.trim();
function group(url: string): string {
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return 'node: internals';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m !== null) return m[1] as string;
  const d = /dist\/(src\/[^/]+|packages\/[^/]+|bench)/.exec(url) ?? /\/(src\/[^/]+|packages\/[^/]+)\//.exec(url);
  return d === null ? shortUrl(url) : (d[1] as string);
}

const selfByFrame = new Map<string, number>();
const selfByGroup = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, t] of selfTime) {
  const node = byId.get(id);
  if (node === undefined) continue;
  const key = frameKey(node.callFrame);
  selfByFrame.set(key, (selfByFrame.get(key) ?? 0) + t);
  const g =
    node.callFrame.functionName === '(garbage collector)'
      ? '(garbage collector)'
      : node.callFrame.functionName === '(idle)'
        ? '(idle)'
        : group(node.callFrame.url);
  selfByGroup.set(g, (selfByGroup.get(g) ?? 0) + t);
  // Inclusive: count each distinct frame once per sample stack.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur);
    if (n === undefined) break;
    const k = frameKey(n.callFrame);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + t);
  }
}

const print = (title: string, map: Map<string, number>, n: number) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, t] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    process.stdout.write(`${((t / total) * 100).toFixed(1).padStart(6)} %  ${(t / 1000).toFixed(0).padStart(7)} ms  ${k}\n`);
  }
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s sampled\n`);
print('Self time by package / folder', selfByGroup, top);
print('Top frames by self time', selfByFrame, top);
print('Top frames by total time', inclusive, top);
