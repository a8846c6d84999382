/**
 * Prints the configuration table (variable | default | meaning) generated from CONFIG_SCHEMA,
 * the one declaration of every variable. With `--write` it replaces the block between the
 * config markers in README.md and docs/configuration.md instead (`npm run docs:config`);
 * test/integration/docs-sync.test.ts fails when a committed table differs from this output.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONFIG_SCHEMA, type ConfigEntry } from '../src/config/schema.js';

/** Start and end of the generated block in a Markdown file. */
export const CONFIG_START_MARKER = '<!-- config:start -->';
export const CONFIG_END_MARKER = '<!-- config:end -->';

/** The files whose config block `--write` regenerates, relative to the repository root. */
export const CONFIG_DOC_FILES = ['README.md', 'docs/configuration.md'] as const;

const REPO_ROOT = resolve(import.meta.dirname, '..');

/** Table-cell text: pipes would end the cell, and `<path>` would be read as an HTML tag. */
function cell(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|');
}

/** The Markdown table of every variable, in schema order, ending with a newline. */
export function renderConfigTable(schema: readonly ConfigEntry[] = CONFIG_SCHEMA): string {
  const rows = schema.map((entry) => {
    const defaultCell = entry.defaultText === undefined ? '*unset*' : `\`${entry.defaultText}\``;
    return `| \`${entry.env}\` | ${defaultCell} | ${cell(entry.help)} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n') + '\n';
}

/**
 * `document` with the text between the markers replaced by `table`. Throws when the markers
 * are missing, duplicated or out of order, so a broken file is never silently left stale.
 */
export function replaceConfigBlock(document: string, table: string): string {
  const start = document.indexOf(CONFIG_START_MARKER);
  const end = document.indexOf(CONFIG_END_MARKER);
  if (
    start === -1 ||
    end === -1 ||
    end < start ||
    document.indexOf(CONFIG_START_MARKER, start + 1) !== -1 ||
    document.indexOf(CONFIG_END_MARKER, end + 1) !== -1
  ) {
    throw new Error(`expected exactly one ${CONFIG_START_MARKER} … ${CONFIG_END_MARKER} block`);
  }
  return `${document.slice(0, start + CONFIG_START_MARKER.length)}\n${table}${document.slice(end)}`;
}

/** The text between the markers of `document` (what replaceConfigBlock wrote), or null. */
export function extractConfigBlock(document: string): string | null {
  const start = document.indexOf(CONFIG_START_MARKER);
  const end = document.indexOf(CONFIG_END_MARKER);
  if (start === -1 || end === -1 || end < start) return null;
  return document.slice(start + CONFIG_START_MARKER.length, end).replace(/^\n/, '');
}

/** Rewrites the block in every file of CONFIG_DOC_FILES; returns the files that changed. */
export function writeConfigDocs(root: string = REPO_ROOT): string[] {
  const table = renderConfigTable();
  const changed: string[] = [];
  for (const file of CONFIG_DOC_FILES) {
    const path = resolve(root, file);
    const before = readFileSync(path, 'utf8');
    const after = replaceConfigBlock(before, table);
    if (after !== before) {
      writeFileSync(path, after);
      changed.push(file);
    }
  }
  return changed;
}

function main(argv: readonly string[]): void {
  if (argv.includes('--write')) {
    const changed = writeConfigDocs();
    process.stdout.write(changed.length === 0 ? 'config docs up to date\n' : `updated ${changed.join(', ')}\n`);
    return;
  }
  process.stdout.write(renderConfigTable());
}

// Run only as a script (tsx scripts/gen-config-docs.ts), not when a test imports the generator.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
