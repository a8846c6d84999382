/**
 * The Node.js lines tempinbox supports (docs/development.md#node-versions): 22.19 and later
 * on the 22 LTS line, and 24 (active LTS) or newer. 22.19 is the oldest release every
 * dependency declares support for (mailauth's floor); better-sqlite3 13 ships one N-API
 * prebuild for Node 22 and later, so nothing is compiled on install.
 *
 * This module uses nothing but `process.versions` and must stay free of imports: the entry
 * points load it before anything else, so an older Node prints one line instead of a stack
 * trace from some missing API deep in a dependency.
 */
export const MIN_NODE_VERSION = { major: 22, minor: 19 } as const;

/** The version requirement as a sentence, or null when `version` ("22.19.0") satisfies it. */
export function nodeVersionProblem(version: string): string | null {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  const { major: needMajor, minor: needMinor } = MIN_NODE_VERSION;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return `tempinbox needs Node.js ${needMajor}.${needMinor} or later (24 LTS recommended); this is Node.js ${version}`;
}

/** Exits with status 1 and one line on stderr when this Node.js is too old. */
export function exitIfUnsupportedNode(): void {
  const problem = nodeVersionProblem(process.versions.node);
  if (problem === null) return;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
