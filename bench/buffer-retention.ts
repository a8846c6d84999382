/**
 * How much of malloc's main arena garbage message buffers take, by kind of buffer: keeps the
 * last 500 of 6,000 buffers of 100 KB alive (500 messages in flight, as in the 100 KB stage of
 * bench/memory-probe.ts), and makes `copies` more per message that are garbage at once. Prints
 * the peak resident size of `[heap]` in /proc/self/smaps. Run it with the flag the probe uses:
 *
 *   node --max-semi-space-size=8 --import tsx bench/buffer-retention.ts <copies> <ab|sab>
 */
import { readFileSync } from 'node:fs';

/** Messages made in all, and how many of the newest stay alive. */
const MESSAGES = 6_000;
const IN_FLIGHT = 500;
/** Bytes of one message (the probe's 100 KB stage). */
const MESSAGE_BYTES = 100_000;
/** Messages between two looks at smaps (each a turn of the event loop, as a server has). */
const SAMPLE_EVERY = 20;

const copies = Number(process.argv[2] ?? 0);
const shared = process.argv[3] === 'sab';

function buffer(): Uint8Array {
  return new Uint8Array(shared ? new SharedArrayBuffer(MESSAGE_BYTES) : new ArrayBuffer(MESSAGE_BYTES)).fill(1);
}

/** Resident MB of the `[heap]` mapping (malloc's main arena). */
function mallocMain(): number {
  let kb = 0;
  let inHeap = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header !== null) {
      inHeap = header[1] === '[heap]';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null && inHeap) kb += Number(rss[1]);
  }
  return kb / 1024;
}

const alive: Uint8Array[] = [];
let peak = 0;
for (let i = 0; i < MESSAGES; i += 1) {
  for (let c = 0; c < copies; c += 1) buffer();
  alive.push(buffer());
  if (alive.length > IN_FLIGHT) alive.shift();
  if (i % SAMPLE_EVERY === 0) {
    await new Promise((resolve) => setImmediate(resolve));
    peak = Math.max(peak, mallocMain());
  }
}
console.log(`${shared ? 'SharedArrayBuffer' : 'ArrayBuffer'}, ${copies} garbage copies per message: malloc main peak ${peak.toFixed(0)} MB, rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
