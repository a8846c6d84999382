/**
 * How big V8's young generation may grow, for the service's main thread and its SQLite thread
 * (docs/architecture.md "Memory"; the parse workers set their own, 64 MiB, in
 * worker-mail-parser.ts, for the large inputs they decode). V8 sizes it from the machine's memory: on a
 * 24 GiB host it lets each isolate grow two semi-spaces of up to 64 MB, and a busy server
 * grows them to full and keeps them, so the main thread, the SQLite thread and the parse
 * worker each held ~100 MB of young generation after a burst of mail. 16 MB semi-spaces keep
 * the whole young generation of an isolate at 48 MB. Objects of one request or one message
 * live for milliseconds, far shorter than the time 16 MB takes to fill, so they still die
 * young. 8 MB saved a little more in the benchmark but not less: on Node 22 the objects of an
 * 8 MiB check page outlived it, were promoted, and a burst of such polls grew the RSS by up to
 * 257 MiB against 132-171 with V8's default and 135-180 with 16 MB (test/e2e/bounded-reads,
 * docs/benchmarks.md "Memory").
 *
 * Like runtime-check.ts, free of imports: the entry points and the benchmark read it.
 */
export const SEMI_SPACE_MB = 16;

/**
 * The node flags the service is started with: `npm start` and bin/tempinbox pass them, and
 * the benchmark and the end-to-end tests start the service with them as users do. A test
 * (runtime-flags.test.ts) keeps package.json and bin/tempinbox in step with this list.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MB}`];

/**
 * The same young generation for the SQLite thread (its resourceLimits): V8 makes an isolate's
 * young generation three semi-spaces (two, plus as much again for new large objects).
 */
export const WORKER_YOUNG_GENERATION_MB = 3 * SEMI_SPACE_MB;
