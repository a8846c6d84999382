import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { PAGE_CSP } from './security-headers.js';

/**
 * The built web app (vite.config.ts writes it). Resolved from the project root, which is two
 * levels above both src/http (tsx, tests) and dist/http (the built program).
 */
export const WEB_ROOT = resolve(import.meta.dirname, '../../dist/web');

/** Hashed bundle files never change under their name: a browser may keep them for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Serves the web app at `/` from `root`: one route per built file (no wildcard, so every other
 * path keeps the API's JSON 404), the `.br`/`.gz` siblings the build wrote chosen by
 * Accept-Encoding, long-lived caching for hashed assets, revalidation for the page itself, and
 * the page's own CSP on HTML. Returns false, serving nothing, when the app is not built.
 */
export async function registerWebAssets(app: FastifyInstance, root: string = WEB_ROOT): Promise<boolean> {
  if (!existsSync(join(root, 'index.html'))) return false;
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    preCompressed: true,
    globIgnore: ['**/*.br', '**/*.gz'],
    serveDotFiles: false,
    // Cache headers are set per file below.
    cacheControl: false,
    setHeaders: (reply, sentPath) => {
      // With preCompressed the path is the `.br`/`.gz` sibling actually sent.
      const path = sentPath.replace(/\.(?:br|gz)$/, '');
      if (path.endsWith('.html')) {
        reply.header('Content-Security-Policy', PAGE_CSP);
        // Always revalidate (ETag): a new build must reach the reader on the next visit.
        reply.header('Cache-Control', 'no-cache');
      } else if (path.includes(`${join(root, 'assets')}/`)) {
        reply.header('Cache-Control', IMMUTABLE);
      } else {
        // favicon and other unhashed files: a day, then revalidate.
        reply.header('Cache-Control', basename(path) === 'favicon.svg' ? 'public, max-age=86400' : 'no-cache');
      }
    },
  });
  return true;
}
