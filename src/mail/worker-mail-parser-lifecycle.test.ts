import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isAppError } from '../domain/errors.js';
import type { ClosableMailParser } from '../ports/mail-parser.js';
import { createWorkerMailParser, type WorkerMailParserOptions } from './worker-mail-parser.js';
import { poisonTestMessage } from '../../test/helpers/poison-message.js';

/** Every parse the main thread runs with the full MIME parser (none is allowed here). */
const inlineParses = vi.hoisted(() => ({ count: 0 }));

vi.mock('./inline-mail-parser.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('./inline-mail-parser.js')>();
  return {
    ...original,
    createInlineMailParser: (...args: Parameters<typeof original.createInlineMailParser>) => {
      const parse = original.createInlineMailParser(...args);
      return (...call: Parameters<typeof parse>) => {
        inlineParses.count += 1;
        return parse(...call);
      };
    },
  };
});

const CONTEXT = { envelopeFrom: 'sender@example.net', recipient: 'victim@tempinbox.test' };
const POISON_WORKER = new URL('../../test/fixtures/workers/poison-parse-worker.ts', import.meta.url);
const encoder = new TextEncoder();

/** A message with one attachment: a full parse lists it, the header-only fallback does not. */
function message(subject: string, poison?: string): Uint8Array {
  return encoder.encode(poisonTestMessage(subject, { poison }));
}

/** OS threads of this process (Linux): each worker thread is one. */
function osThreads(): number {
  return readdirSync('/proc/self/task').length;
}

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const opened: ClosableMailParser[] = [];

function poisonPool(options: WorkerMailParserOptions = {}): { parse: ClosableMailParser; errors: string[] } {
  const errors: string[] = [];
  const parse = createWorkerMailParser({
    threads: 1,
    workerUrl: POISON_WORKER,
    onParseError: (error) => errors.push(String(error)),
    ...options,
  });
  opened.push(parse);
  return { parse, errors };
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((parse) => parse.close()));
  inlineParses.count = 0;
});

describe('createWorkerMailParser lifecycle', () => {
  it.each([
    ['exit', /exited with code: 70/],
    ['oom', /memory limit/],
    ['throw', /poisoned on purpose/],
  ])(
    'a message whose worker fails (%s) gets the header-only fallback, is never parsed on the main thread, and the messages behind it parse in a fresh worker',
    async (poison, why) => {
      // A generous deadline: starting workers under tsx on a loaded machine takes seconds.
      const { parse, errors } = poisonPool({ deadlineMs: 60_000 });
      const results = await Promise.all([
        parse(message('before'), CONTEXT),
        parse(message('poison', poison), CONTEXT),
        parse(message('after 1'), CONTEXT),
        parse(message('after 2'), CONTEXT),
      ]);
      const [before, poisoned, after1, after2] = results;
      expect(poisoned?.subject).toBe('poison');
      expect(poisoned?.attachments).toEqual([]);
      for (const [parsed, subject] of [[before, 'before'], [after1, 'after 1'], [after2, 'after 2']] as const) {
        expect(parsed?.subject).toBe(subject);
        expect(parsed?.text).toContain(`body of ${subject}`);
        expect(parsed?.attachments.map((attachment) => attachment.filename)).toEqual(['a.bin']);
      }
      expect(errors).toEqual([expect.stringMatching(why)]);
      expect(inlineParses.count).toBe(0);
      // And the pool is still healthy afterwards.
      expect((await parse(message('later'), CONTEXT)).attachments).toHaveLength(1);
    },
    90_000,
  );

  it('refuses a parse with a temporary error while its queue is full, and takes work again once it drains', async () => {
    const { parse } = poisonPool({ maxQueued: 2, deadlineMs: 60_000 });
    const busy = parse(message('busy', 'slow-1500'), CONTEXT);
    const queued = [parse(message('queued 1'), CONTEXT), parse(message('queued 2'), CONTEXT)];
    const refused = await parse(message('one too many'), CONTEXT).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isAppError(refused) && refused.code).toBe('unavailable');
    expect((await busy).subject).toBe('busy');
    expect((await Promise.all(queued)).map((parsed) => parsed.subject)).toEqual(['queued 1', 'queued 2']);
    expect((await parse(message('room again'), CONTEXT)).subject).toBe('room again');
    expect(inlineParses.count).toBe(0);
  }, 60_000);

  it('bounds the queue by raw bytes too: small messages keep coming while large ones would pass the budget', async () => {
    const busy = message('busy', 'slow-1500');
    // Room for the busy message and one more of its size, not two more.
    const { parse } = poisonPool({ maxQueued: 100, maxQueuedBytes: busy.byteLength * 2 + 10, deadlineMs: 60_000 });
    const running = parse(busy, CONTEXT);
    const second = parse(message('second'), CONTEXT);
    const refused = await parse(message('third'), CONTEXT).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isAppError(refused) && refused.code).toBe('unavailable');
    expect((await running).subject).toBe('busy');
    expect((await second).subject).toBe('second');
    // Drained: a message alone always goes, whatever its size against the budget.
    const { parse: tiny } = poisonPool({ maxQueuedBytes: 1, deadlineMs: 60_000 });
    expect((await tiny(message('alone'), CONTEXT)).subject).toBe('alone');
    expect(inlineParses.count).toBe(0);
  }, 60_000);

  it('keeps the deadline: a stuck parse is abandoned with the fallback and its worker replaced', async () => {
    // Two warm threads, so that `next` neither queues behind `stuck` nor waits for a start.
    const { parse, errors } = poisonPool({ threads: 2, deadlineMs: 8000 });
    await Promise.all([parse(message('warm 1'), CONTEXT), parse(message('warm 2'), CONTEXT)]);
    errors.length = 0;
    const [stuck, next] = await Promise.all([parse(message('stuck', 'slow-60000'), CONTEXT), parse(message('next'), CONTEXT)]);
    expect(stuck.subject).toBe('stuck');
    expect(stuck.attachments).toEqual([]);
    expect(errors).toEqual([expect.stringContaining('took over 8000 ms')]);
    expect(next.attachments).toHaveLength(1);
    expect(inlineParses.count).toBe(0);
  }, 60_000);

  it('counts a deadline from when a worker takes the message: one queued behind a stuck parse is parsed whole', async () => {
    // No spare worker, so `next` really waits for `stuck` to be given up.
    // The deadline covers starting a worker under tsx, seconds on a loaded machine.
    const { parse, errors } = poisonPool({ threads: 1, spareThreads: 0, deadlineMs: 8000 });
    await parse(message('warm'), CONTEXT);
    errors.length = 0;
    const [stuck, next] = await Promise.all([parse(message('stuck', 'slow-60000'), CONTEXT), parse(message('next'), CONTEXT)]);
    expect(stuck.attachments).toEqual([]);
    expect(next.subject).toBe('next');
    expect(next.attachments).toHaveLength(1);
    expect(errors).toEqual([expect.stringContaining('took over 8000 ms')]);
    expect(inlineParses.count).toBe(0);
  }, 60_000);

  it('moves a slow parse to a spare worker: the messages behind it do not wait for it', async () => {
    const { parse } = poisonPool({ threads: 1, spareThreads: 1, slowMs: 100, deadlineMs: 60_000 });
    await parse(message('warm'), CONTEXT);
    let slowDone = false;
    const slow = parse(message('slow', 'slow-8000'), CONTEXT).then((parsed) => {
      slowDone = true;
      return parsed;
    });
    const next = await parse(message('next'), CONTEXT);
    expect(slowDone).toBe(false);
    expect(next.attachments).toHaveLength(1);
    // The slow one is not given up: it finishes in its spare worker with a whole parse.
    expect((await slow).attachments).toHaveLength(1);
  }, 60_000);

  it('refuses a parse that waits too long for a worker with a temporary error, never a fallback', async () => {
    const { parse } = poisonPool({ threads: 1, spareThreads: 0, maxWaitMs: 500, deadlineMs: 60_000 });
    const busy = parse(message('busy', 'slow-3000'), CONTEXT);
    const refused = await parse(message('waited'), CONTEXT).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isAppError(refused) && refused.code).toBe('unavailable');
    expect((await busy).attachments).toHaveLength(1);
    expect((await parse(message('later'), CONTEXT)).attachments).toHaveLength(1);
  }, 60_000);

  it('close() ends every worker thread, and later parses are refused', async () => {
    const parse = createWorkerMailParser({ threads: 2 });
    opened.push(parse);
    await Promise.all([parse(message('one'), CONTEXT), parse(message('two'), CONTEXT)]);
    // Relative counts: other threads of the process (libuv's pool) may start meanwhile.
    const running = osThreads();
    await parse.close();
    await eventually(() => osThreads() <= running - 2);
    const refused = await parse(message('after close'), CONTEXT).catch((error: unknown) => error);
    expect(isAppError(refused) && refused.code).toBe('unavailable');
  }, 60_000);
});
