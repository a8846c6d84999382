import { readFileSync } from 'node:fs';

/** A V8 .cpuprofile (what `node --cpu-prof` writes), the fields the summary reads. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
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
