import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractConfigBlock, renderConfigTable } from '../../scripts/gen-config-docs.js';
import { OPENAPI_PATH, renderOpenApi } from '../../scripts/gen-openapi.js';
import { ERROR_CODES } from '../../src/domain/errors.js';
import { HTTP_STATUS } from '../../src/http/error-map.js';

/**
 * The documentation is checked against the code it describes (docs/architecture.md):
 * the error catalog, the generated configuration table and the route table.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string): string => readFileSync(resolve(ROOT, path), 'utf8');

const apiDoc = read('docs/api.md');

/** The cells of every Markdown table row (`| a | b |`) of a document, trimmed. */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('|') && line.endsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

/** `METHOD path` of every route registered in src/http/routes.ts, with `:param` as `<param>`. */
function registeredRoutes(): string[] {
  const source = read('src/http/routes.ts');
  const routes: string[] = [];
  for (const match of source.matchAll(/\bapp\.(get|post|put|patch|delete)\s*(?:<[^(]*>)?\(\s*'([^']+)'/g)) {
    const [, method = '', path = ''] = match;
    routes.push(`${method.toUpperCase()} ${path.replace(/:([A-Za-z0-9_]+)/g, '<$1>')}`);
  }
  return routes;
}

describe('docs/api.md and the error catalog', () => {
  const rows = tableRows(apiDoc);

  it.each([...ERROR_CODES])('`%s` has exactly one table row, with its HTTP status', (code) => {
    const matching = rows.filter((cells) => cells.includes(`\`${code}\``));
    expect(matching, `table rows naming \`${code}\``).toHaveLength(1);
    const cells = matching[0] ?? [];
    const status = cells[cells.indexOf(`\`${code}\``) + 1] ?? '';
    expect(status.match(/^\d{3}/)?.[0], `HTTP status cell of \`${code}\``).toBe(String(HTTP_STATUS[code]));
  });

  it('names no error code in its tables that the catalog does not have', () => {
    const known = new Set<string>(ERROR_CODES);
    const tableCodes = rows.filter((cells) => /^`[a-z_]+`$/.test(cells[0] ?? '') && /^\d{3}$/.test(cells[1] ?? ''));
    const unknown = tableCodes.map((cells) => (cells[0] ?? '').slice(1, -1)).filter((code) => !known.has(code));
    expect(unknown).toEqual([]);
  });
});

describe('configuration tables', () => {
  const generated = renderConfigTable();

  it.each(['README.md', 'docs/configuration.md'])('%s holds the table generated from CONFIG_SCHEMA', (file) => {
    const block = extractConfigBlock(read(file));
    expect(block, `${file} has the config markers`).not.toBeNull();
    // Regenerate with `npm run docs:config` when this fails.
    expect(block).toBe(generated);
  });
});

describe('docs/api.md and the route table', () => {
  const routes = registeredRoutes();

  it('finds the routes in src/http/routes.ts', () => {
    expect(routes.length).toBeGreaterThanOrEqual(10);
    expect(routes).toContain('GET /api/check/<username>');
    expect(routes).toContain('POST /api/premium/redeem');
  });

  // A heading per route, so that `GET /api/messages/<id>` is not satisfied by its `/raw` sibling.
  it.each(registeredRoutes())('documents %s under its own heading', (route) => {
    const headings = apiDoc.split('\n').filter((line) => /^#{2,4} /.test(line));
    expect(headings).toContain(`### \`${route}\``);
  });
});

describe('docs/openapi.json', () => {
  it('is what the service generates from its route schemas (regenerate: npm run docs:openapi)', async () => {
    const generated = await renderOpenApi();
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(generated);
    const document = JSON.parse(generated) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toContain('/api/check/{username}');
  });
});
