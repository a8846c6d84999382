// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Layers a folder may not import: the dependency direction of docs/architecture.md. */
const forbidden = (patterns, why) => ({
  'no-restricted-imports': ['error', { patterns: [{ group: patterns, message: why }] }],
});

const infrastructure = [
  'fastify', '@fastify/*', 'smtp-server', 'kysely', 'pg', 'better-sqlite3', 'postal-mime',
  'sanitize-html', 'html-to-text', 'pino', 'prom-client', 'rate-limiter-flexible', 'commander',
  'node:net', 'node:http', 'node:tls', 'node:fs', 'node:fs/*', 'mailauth', 'node:dns', 'node:dns/*',
  'node:https', 'ipaddr.js',
];
const adapters = ['**/http/**', '**/events/**', '**/smtp/**', '**/storage/**', '**/mail/**', '**/mail-auth/**', '**/jobs/**', '**/rate-limit/**', '**/app.js', '**/config/**', '**/observability/**', '**/webhooks/**'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'web/dist/**', 'packages/*/dist/**', 'examples/*/test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Unused values are bugs or dead code; a leading underscore marks an intentional one.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Named exports only (style.md §11): a default export hides the name at the import site.
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: forbidden([...infrastructure, '**/ports/**', '**/services/**', ...adapters],
      'domain/ depends on nothing but domain/ and the standard library (style.md: the shape).'),
  },
  {
    files: ['src/ports/**/*.ts'],
    rules: forbidden([...infrastructure, '**/services/**', ...adapters],
      'ports/ name interfaces in domain terms; no adapter or library types.'),
  },
  {
    files: ['src/services/**/*.ts'],
    rules: forbidden([...infrastructure, ...adapters],
      'services/ take ports, never adapters or their libraries.'),
  },
  {
    // The web app runs in the browser: browser globals, and none of Node's (TypeScript's
    // web/tsconfig.json has the DOM library and no Node types, so a stray `process` fails there too).
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', navigator: 'readonly', location: 'readonly', localStorage: 'readonly', fetch: 'readonly', CSS: 'readonly' },
    },
    rules: forbidden(['node:*', ...infrastructure, '**/src/**'],
      'web/ talks only to the public JSON API over fetch; it shares no code with the server.'),
  },
  {
    // The library runs in browsers too: its main entry uses fetch and nothing of Node's. The
    // CLI (src/cli) is the one part that may.
    files: ['packages/client/src/**/*.ts'],
    ignores: ['packages/client/src/cli/**'],
    rules: forbidden(['node:*'], '@tempinbox/client runs in browsers too: only fetch and the web platform, no Node built-ins.'),
  },
  {
    // The example's app is plain JavaScript run by Node, as a user copies it.
    files: ['examples/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URLSearchParams: 'readonly' } },
  },
  {
    // Tool entry points (ESLint, vitest and Vite configs, the reporter) must be default exports.
    files: ['test/helpers/summary-reporter.ts', 'eslint.config.js', 'vitest.config.ts', 'vitest.unit.config.ts', 'test/fixtures/*/vitest.config.ts', 'vite.config.ts', 'examples/*/playwright.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
