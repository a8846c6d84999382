import { Script } from 'node:vm';

/**
 * Keeps V8's memory reducer able to run on Node 24 (docs/architecture.md "Memory", "Giving
 * memory back when idle").
 *
 * V8 gives a burst's memory back to the system only in a memory-reducing garbage collection,
 * which its memory reducer starts once the allocation rate has fallen. Since V8 13.1 (Node 24)
 * that test includes the allocation rate of the isolate's C++ heap (cppgc), and a rate of
 * exactly zero counts as the highest possible (V8 CL 5935313; reported as V8 issue 570738027
 * and nodejs/node#66564). A process that never allocates there, like this one, therefore never
 * looks idle: the reducer waits for its 100 s watchdog, and any ordinary full collection in the
 * meantime restarts that clock. So the pages freed after a burst (opening 10,000 event streams,
 * a wave of mail) stay resident: measured with 10,000 streams held, 380-392 MB of RSS 30 s
 * after they opened, against 292-295 MB with this nudge (docs/benchmarks.md).
 *
 * The nudge allocates one small object on that heap now and then: Node creates a compiled
 * `vm.Script`'s wrapper there. The rate V8 then sees is tiny and decays between nudges, so
 * it reads as idle when the process is; when the process is busy, the other two rates (young
 * and old generation) still say so, and the reducer waits as designed. On Node 22 (V8 12.4)
 * a zero rate already reads as idle; the nudge changes nothing there.
 */

/**
 * How often the nudge allocates (ms). Between nudges V8's decayed rate must stay above zero
 * (it halves every 100 ms, so in double precision it reaches zero some 100 s after the last
 * allocation), and the reducer's look every 8 s should rarely fall on a nudge (a look that
 * does reads "busy"): 30 s is the period the public report on this bug showed to keep the
 * reducer working across bursts, and the one measured here.
 */
const MEMORY_REDUCER_NUDGE_MS = 30_000;

/** The smallest script there is: compiling it is all the nudge needs (it never runs). */
const NUDGE_SOURCE = '0';

/** One allocation on the isolate's C++ heap: the new script's wrapper object. */
function nudge(): void {
  new Script(NUDGE_SOURCE);
}

/**
 * Starts the nudge for this thread's isolate (the service's main thread holds the connections
 * and nearly all of the heap), for the life of the process: the timer is unref'd, so it never
 * keeps the process alive.
 */
export function keepMemoryReducerAwake(): void {
  nudge();
  setInterval(nudge, MEMORY_REDUCER_NUDGE_MS).unref();
}
