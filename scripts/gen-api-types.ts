/**
 * Writes the API's TypeScript types, generated from docs/openapi.json by @hey-api/openapi-ts
 * (types only: no runtime package), into packages/client/src/generated/. The library and the
 * web app both use them. `--check` exits 1 when the committed files differ from what the
 * generator makes now (test/integration/api-types-sync.test.ts does the same).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');
/** Where the generated types are committed. */
export const API_TYPES_DIR = join(ROOT, 'packages/client/src/generated');
const OPENAPI = join(ROOT, 'docs/openapi.json');
const GENERATOR = join(ROOT, 'node_modules/.bin/openapi-ts');
/** The generator runs in a second or two; a hung one fails the check instead of stalling it. */
const GENERATOR_TIMEOUT_MS = 60_000;

/** Runs the generator into `outDir` (created or emptied by it). */
export async function generateApiTypes(outDir: string): Promise<void> {
  await promisify(execFile)(GENERATOR, ['-i', OPENAPI, '-o', outDir, '-p', '@hey-api/typescript', '--no-log-file', '--silent'], {
    cwd: ROOT,
    timeout: GENERATOR_TIMEOUT_MS,
  });
}

/** Each file of a folder with its text, by name. */
export function readFolder(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).sort().map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}

/** The names of the files that differ between the committed types and a fresh generation. */
export async function staleApiTypes(): Promise<string[]> {
  const fresh = mkdtempSync(join(tmpdir(), 'tempinbox-api-types-'));
  try {
    await generateApiTypes(fresh);
    const now = readFolder(fresh);
    const committed = readFolder(API_TYPES_DIR);
    const names = new Set([...Object.keys(now), ...Object.keys(committed)]);
    return [...names].filter((name) => now[name] !== committed[name]).sort();
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  if (process.argv.includes('--check')) {
    const stale = await staleApiTypes();
    if (stale.length > 0) {
      process.stderr.write(`packages/client/src/generated is stale (${stale.join(', ')}): run npm run docs:api-types\n`);
      process.exit(1);
    }
  } else {
    await generateApiTypes(API_TYPES_DIR);
  }
}
