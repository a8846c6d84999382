import { spawnSync } from 'node:child_process';
import { delimiter, isAbsolute, join } from 'node:path';

/** How a tool is checked: the command that proves it runs, the oldest version that will do, and how to get it. */
interface ToolSpec {
  /** Arguments of the version command; it must exit 0. */
  args: readonly string[];
  /** The oldest [major, minor] that will do, read from the version answer's first `N.N`; none: any. */
  minVersion?: readonly [number, number];
  /** The Debian command that installs it (.ci/run installs the same packages). */
  install: string;
}

/**
 * The programs outside npm that some test files need, the command that proves each one runs,
 * and the Debian packages that provide it (.ci/run installs them all).
 */
export const EXTERNAL_TOOLS = {
  chromium: { args: ['--version'], install: 'sudo apt-get install chromium' },
  swaks: { args: ['--version'], install: 'sudo apt-get install swaks' },
  openssl: { args: ['version'], install: 'sudo apt-get install openssl' },
  // The Python client supports 3.9 and later (clients/python/pyproject.toml); its install test
  // builds a wheel with pip and installs it into a fresh venv, hence Debian's venv and pip.
  python3: { args: ['--version'], minVersion: [3, 9], install: 'sudo apt-get install python3 python3-venv python3-pip' },
} as const satisfies Record<string, ToolSpec>;

/** The name of an external tool, which is also the command looked up on PATH. */
export type ToolName = keyof typeof EXTERNAL_TOOLS;

/** In CI a missing tool fails the run instead of skipping (.ci/run sets it). */
export const TOOLS_REQUIRED = process.env.TEMPINBOX_REQUIRE_TOOLS === '1';

/** How long one probe may take: `chromium --version` starts a shell wrapper and the browser binary (0.15 s idle), so ten seconds only trips on a hung program. */
const PROBE_TIMEOUT_MS = 10_000;
/** A version banner is a line or two; anything beyond this is not a version answer. */
const PROBE_OUTPUT_BYTES = 64 * 1024;
/** Errors that mean "not this PATH entry", as a shell's command search treats them: keep looking. */
const NOT_HERE = new Set(['ENOENT', 'EACCES', 'ENOTDIR']);

/** A tool that ran (its absolute path) or why it cannot be used. */
export type ToolProbe = { path: string; version: string } | { missing: string };

/**
 * Finds a tool the way a shell would, by running it: the first PATH entry holding the command
 * decides, and it counts only when its version command exits 0 (and, for a tool with a
 * minVersion, answers that version or a later one). A file that exists but does not run (a
 * broken install, a placeholder) is as missing as no file at all, and so is one too old.
 */
export function probeTool(name: ToolName, searchPath = process.env.PATH ?? ''): ToolProbe {
  const { args, minVersion }: ToolSpec = EXTERNAL_TOOLS[name];
  const shown = `\`${[name, ...args].join(' ')}\``;
  // Empty and relative entries would make the answer depend on the working folder.
  for (const dir of searchPath.split(delimiter).filter((entry) => isAbsolute(entry))) {
    const candidate = join(dir, name);
    const result = spawnSync(candidate, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: PROBE_TIMEOUT_MS, maxBuffer: PROBE_OUTPUT_BYTES });
    const code = (result.error as NodeJS.ErrnoException | undefined)?.code;
    if (code !== undefined && NOT_HERE.has(code)) continue;
    if (result.error !== undefined) return { missing: `${shown} failed (${candidate}): ${result.error.message}` };
    if (result.status !== 0) return { missing: `${shown} exited with ${result.status ?? result.signal} (${candidate})` };
    // Python before 3.4 answered --version on stderr.
    const version = (result.stdout.trim() || result.stderr.trim()).split('\n')[0] ?? '';
    if (minVersion !== undefined && !meets(version, minVersion)) return { missing: `${shown} answered "${version}" (${candidate}): ${minVersion.join('.')} or later is needed` };
    return { path: candidate, version };
  }
  return { missing: `${name} is not on PATH` };
}

/** Whether the first `major.minor` in a version answer is `min` or later, compared as numbers (3.10 is after 3.9). */
function meets(answer: string, [minMajor, minMinor]: readonly [number, number]): boolean {
  const match = /(\d+)\.(\d+)/.exec(answer);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major > minMajor || (major === minMajor && minor >= minMinor);
}

/**
 * Whether this file's tests that need `name` run. When the tool does not run: in CI
 * (TEMPINBOX_REQUIRE_TOOLS=1) throws, so the file fails loudly; elsewhere prints one line
 * saying which tests were skipped, what is missing and how to get it, and returns false (use
 * with describe.skipIf or it.skipIf).
 */
export function toolAvailable(name: ToolName, what: string): boolean {
  const probe = probeTool(name);
  if ('path' in probe) return true;
  const message = `${name} tests skipped (${what}): ${probe.missing}. Install it: ${EXTERNAL_TOOLS[name].install} (as .ci/run does).`;
  if (TOOLS_REQUIRED) throw new Error(`${message.replace('skipped', 'FAILED')} TEMPINBOX_REQUIRE_TOOLS=1 requires them.`);
  console.warn(message);
  return false;
}

/** The absolute path of a tool that runs, for the tests that use it; throws when it does not run. */
export function toolPath(name: ToolName): string {
  const probe = probeTool(name);
  if ('path' in probe) return probe.path;
  throw new Error(`${name} is needed here but ${probe.missing}; guard the test with toolAvailable('${name}', …). Install it: ${EXTERNAL_TOOLS[name].install}.`);
}
