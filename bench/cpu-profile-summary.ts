import { readFileSync } from 'node:fs';

/** One frame of a profile's call tree. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** A V8 .cpuprofile (what `node --cpu-prof` writes), the fields the summary reads. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
  /** Start of the profile, µs on the monotonic clock (the clock of process.hrtime). */
  startTime: number;
}

/** Self time per function and per package/folder, as shares of all samples. */
export interface ProfileSummary {
  functions: Array<{ name: string; share: number }>;
  places: Array<{ name: string; share: number }>;
  /** Inclusive share of the frames whose function or place matches each given pattern. */
  inclusive: Array<{ name: string; share: number }>;
}

/** Where a frame's code lives: the npm package, the project folder, or node's internals. */
function placeOf(url: string): string {
  if (url === '') return '(native/V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1] ?? url;
  const own = /\/(dist|src)\/(.*)\/[^/]+$/.exec(url);
  if (own !== null) return `tempinbox ${own[2]}`;
  if (url.startsWith('node:')) return url.split('/')[0] ?? url;
  return url;
}

/** Summarises a profile: top self time by function and by place, inclusive time of patterns. */
export function summariseProfile(path: string, top = 25, patterns: readonly string[] = []): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const fn = new Map<string, number>();
  const place = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of self) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = placeOf(url);
    const name = `${functionName || '(anonymous)'} ${where}${url === '' ? '' : `:${lineNumber + 1}`}`;
    fn.set(name, (fn.get(name) ?? 0) + time);
    place.set(where, (place.get(where) ?? 0) + time);
    // Inclusive: count this sample once for every pattern some ancestor frame matches.
    const hit = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame === undefined) continue;
      for (const pattern of patterns) if (`${frame.functionName} ${frame.url}`.includes(pattern)) hit.add(pattern);
    }
    for (const pattern of hit) inclusive.set(pattern, (inclusive.get(pattern) ?? 0) + time);
  }
  const ranked = (map: Map<string, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, time]) => ({ name, share: time / total }));
  return { functions: ranked(fn), places: ranked(place), inclusive: ranked(inclusive) };
}

/** V8's pseudo-frame for the samples taken while the thread's event loop waited for work. */
const IDLE = '(idle)';

/**
 * Busy time (µs) of the samples taken between `from` and `to` (µs on the monotonic clock, as
 * process.hrtime.bigint() / 1000 reads it in any process of the machine), idle samples left
 * out, summed by the key `keyOf` gives each sample's stack (leaf first, root last). A sample
 * counts the wall time since the previous one: time on a CPU, and also time the thread waited
 * for one or sat in a system call (an fsync) while in that code.
 */
export function busyByKey(path: string, from: number, to: number, keyOf: (stack: readonly CallFrame[]) => string): Map<string, number> {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // One key per call-tree node, computed once: a profile has far fewer nodes than samples.
  const keys = new Map<number, string | null>();
  const keyOfNode = (id: number): string | null => {
    const known = keys.get(id);
    if (known !== undefined) return known;
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame !== undefined) stack.push(frame);
    }
    const key = stack[0]?.functionName === IDLE ? null : keyOf(stack);
    keys.set(id, key);
    return key;
  };
  const busy = new Map<string, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < from || at > to) return;
    const key = keyOfNode(id);
    if (key !== null) busy.set(key, (busy.get(key) ?? 0) + delta);
  });
  return busy;
}
