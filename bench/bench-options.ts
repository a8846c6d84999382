/** Parts of the benchmark that can be run alone (`--only smtp,http`). */
export const PHASES = ['smtp', 'auth', 'latency', 'http', 'scale', 'sweeper', 'pg', 'live', 'peer', 'storage'] as const;
/** One part of the benchmark. */
export type Phase = (typeof PHASES)[number];

/** How much to measure: the full method of docs/benchmarks.md, or a quick smoke run. */
export interface BenchOptions {
  quick: boolean;
  /** Runs per figure; the figure is their median. */
  runs: number;
  /** Length of one run, seconds. */
  seconds: number;
  phases: Set<Phase>;
  /** Data already stored for the scale figures. */
  scaleInboxes: number;
  scaleMessages: number;
  /** Expired messages (5 per inbox) the sweeper figure deletes. */
  sweepMessages: number;
  /** PostgreSQL server for figure 7 (a database is created in it and dropped after). */
  postgresUrl: string;
  /** Where the JSON results go. */
  out: string | undefined;
  /** Only the cases whose label contains this text (for profiling one case). */
  caseFilter: string | undefined;
  /** Extra environment for the service (e.g. LOG_LEVEL=warn to see what logging costs). */
  serviceEnv: Record<string, string>;
}

/**
 * Parses `npm run bench -- [--quick] [--only a,b] [--runs N] [--seconds S] [--out file]
 * [--case text] [--env NAME=value]…`.
 */
export function parseOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const value = (flag: string): string | undefined => {
    const index = argv.indexOf(flag);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const only = value('--only');
  const phases = new Set<Phase>(only === undefined ? PHASES : (only.split(',') as Phase[]));
  for (const phase of phases) if (!PHASES.includes(phase)) throw new Error(`unknown phase ${phase}; expected ${PHASES.join(', ')}`);
  return {
    quick,
    // Quick mode is a smoke run (one short run per figure, smaller data) that fits in two minutes.
    runs: Number(value('--runs') ?? (quick ? 1 : 3)),
    seconds: Number(value('--seconds') ?? (quick ? 1 : 5)),
    phases,
    scaleInboxes: quick ? 50_000 : 1_000_000,
    scaleMessages: quick ? 250_000 : 5_000_000,
    sweepMessages: quick ? 50_000 : 1_000_000,
    postgresUrl: value('--postgres') ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    out: value('--out'),
    caseFilter: value('--case'),
    serviceEnv: Object.fromEntries(
      argv.flatMap((arg, i) => (arg === '--env' ? [argv[i + 1] ?? ''] : [])).map((pair) => [pair.split('=')[0] ?? '', pair.slice(pair.indexOf('=') + 1)]),
    ),
  };
}
