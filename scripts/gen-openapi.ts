/**
 * Writes docs/openapi.json: the OpenAPI 3.1 document the running service serves at
 * GET /api/openapi.json, generated from the route schemas. `--check` exits 1 when the
 * committed file differs (docs-sync test does the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { createLogger } from '../src/observability/logger.js';

export const OPENAPI_PATH = resolve(import.meta.dirname, '../docs/openapi.json');

/** The document as the service generates it, pretty-printed with a final newline. */
export async function renderOpenApi(): Promise<string> {
  const app = await createApp(loadConfig({ DATABASE_URL: 'sqlite::memory:' }), { logger: createLogger('silent') });
  try {
    await app.http.ready();
    return `${JSON.stringify(app.http.swagger(), null, 2)}\n`;
  } finally {
    await app.stop();
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const generated = await renderOpenApi();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(OPENAPI_PATH, 'utf8');
    if (committed !== generated) {
      process.stderr.write('docs/openapi.json is stale: run npm run docs:openapi\n');
      process.exit(1);
    }
  } else {
    writeFileSync(OPENAPI_PATH, generated);
  }
}
