import { runCli } from './cli.js';

// `npm start` runs `node dist/main.js serve`; bin/tempinbox calls runCli the same way.
runCli(process.argv).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
