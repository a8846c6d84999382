import { exitIfUnsupportedNode } from './runtime-check.js';

// Checked before the CLI is loaded: static imports would run first and could fail on an older
// Node with an unhelpful error, so the rest of the program is imported only afterwards.
exitIfUnsupportedNode();
const { runCli } = await import('./cli.js');

// `npm start` runs `node --max-semi-space-size=16 dist/main.js serve` (src/runtime-flags.ts);
// bin/tempinbox calls runCli the same way.
runCli(process.argv).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
