import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/** Where the server looks for the built web app (src/http/web-assets.ts). */
const OUT_DIR = resolve(import.meta.dirname, 'dist/web');
/** Text assets worth compressing; images and fonts are already compressed. */
const COMPRESSIBLE = /\.(?:js|css|html|svg|json|txt)$/;

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * Writes `.br` and `.gz` beside each text asset once the bundle is written, so the server
 * sends them as they are (@fastify/static `preCompressed`) instead of compressing on every
 * request, and the first-load size is the number this build prints.
 */
function precompress(): Plugin {
  return {
    name: 'tempinbox-precompress',
    apply: 'build',
    closeBundle() {
      let jsCss = 0;
      let all = 0;
      for (const file of filesUnder(OUT_DIR)) {
        if (!COMPRESSIBLE.test(file)) continue;
        const raw = readFileSync(file);
        const br = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length } });
        writeFileSync(`${file}.br`, br);
        writeFileSync(`${file}.gz`, gzipSync(raw, { level: 9 }));
        all += br.length;
        if (/\.(?:js|css)$/.test(file)) jsCss += br.length;
      }
      this.info(`first load, brotli: JS+CSS ${jsCss} bytes, all text assets ${all} bytes`);
    },
  };
}

export default defineConfig({
  root: resolve(import.meta.dirname, 'web'),
  // Preact through Oxc's automatic JSX runtime: no Babel, no preset plugin.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    target: 'es2022',
    // One small bundle: the polyfill would add code for browsers that already preload modules.
    modulePreload: { polyfill: false },
    // No inline data: URLs for assets: the page CSP is simplest when everything is a file.
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: true,
  },
  plugins: [precompress()],
});
