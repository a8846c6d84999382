import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ParsedMail } from '../domain/types.js';
import { largeFixtures } from '../../test/fixtures/eml/generate-large-fixtures.js';
import { createInlineMailParser } from './inline-mail-parser.js';
import { createWorkerMailParser as createPool, type WorkerMailParserOptions } from './worker-mail-parser.js';

const CONTEXT = { envelopeFrom: 'sender@example.net', recipient: 'victim@tempinbox.test' };
const FIXTURES = new URL('../../test/fixtures/eml/', import.meta.url);
const encoder = new TextEncoder();

/** Every committed and generated fixture of the hostile corpus, plus a large plain message. */
function corpus(): Array<{ name: string; raw: Uint8Array }> {
  const committed = readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.eml'))
    .map((name) => ({ name, raw: new Uint8Array(readFileSync(new URL(name, FIXTURES))) }));
  const generated = largeFixtures().map((fixture) => ({
    name: fixture.name,
    raw: typeof fixture.content === 'string' ? encoder.encode(fixture.content) : new Uint8Array(fixture.content),
  }));
  const line = 'The quick brown fox jumps over the lazy dog 0123456789.\r\n';
  const large = encoder.encode(`From: a@example.org\r\nSubject: large\r\n\r\n${line.repeat(2000)}`);
  return [...committed, ...generated, { name: 'large-plain', raw: large }];
}

/** A plain message whose subject tells it apart. */
function numbered(n: number): Uint8Array {
  return encoder.encode(`From: a@example.org\r\nSubject: message ${n}\r\n\r\nbody ${n}\r\n`);
}

const pools: Array<ReturnType<typeof createPool>> = [];

/** A pool closed after the file's tests (no worker outlives them). */
function createWorkerMailParser(options: WorkerMailParserOptions): ReturnType<typeof createPool> {
  const pool = createPool(options);
  pools.push(pool);
  return pool;
}

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
});

describe('createWorkerMailParser', () => {
  const parser = createWorkerMailParser({ threads: 2 });
  const inline = createInlineMailParser();

  it('gives exactly what the inline parser gives, for every message of the hostile corpus', async () => {
    for (const { name, raw } of corpus()) {
      const expected: ParsedMail = await inline(raw, CONTEXT);
      // The worker gets a copy of the bytes; compare against an untouched original.
      expect(await parser(raw.slice(), CONTEXT), name).toEqual(expected);
    }
    // The corpus holds deliberately slow messages, parsed twice here.
  }, 90_000);

  it('answers each of many concurrent messages with its own parse', async () => {
    const results = await Promise.all(Array.from({ length: 60 }, (_, n) => parser(numbered(n), CONTEXT)));
    results.forEach((parsed, n) => {
      expect(parsed.subject).toBe(`message ${n}`);
      expect(parsed.text.trim()).toBe(`body ${n}`);
    });
  });

  it("reports a message's recovered parse errors to onParseError, and only that message's", async () => {
    const onParseError = vi.fn();
    const reporting = createWorkerMailParser({ threads: 1, limits: { maxNestingDepth: 2 }, onParseError });
    const nested = encoder.encode(
      ['Content-Type: multipart/mixed; boundary=a', '', '--a', 'Content-Type: multipart/mixed; boundary=b', '', '--b',
        'Content-Type: multipart/mixed; boundary=c', '', '--c', 'Content-Type: text/plain', '', 'deep', '--c--', '--b--', '--a--', ''].join('\r\n'),
    );
    await Promise.all([reporting(numbered(1), CONTEXT), reporting(nested, CONTEXT), reporting(numbered(2), CONTEXT)]);
    expect(onParseError).toHaveBeenCalledTimes(1);
    expect(onParseError.mock.calls[0]?.[0]).toBeInstanceOf(Error);
  });

  it('abandons a parse past its deadline: header-only fallback, reported, and the next message is parsed again', async () => {
    const errors: unknown[] = [];
    // 0 ms: the deadline fires before a worker can even start, as it would for a stuck parse.
    const stuck = createWorkerMailParser({ threads: 1, deadlineMs: 0, onParseError: (error) => errors.push(error) });
    const raw = encoder.encode('From: a@example.org\r\nSubject: deadline\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n');
    const parsed = await stuck(raw, CONTEXT);
    expect(parsed.subject).toBe('deadline');
    expect(errors.map((error) => String(error))).toEqual([expect.stringContaining('took over 0 ms')]);

    const healthy = createWorkerMailParser({ threads: 1 });
    expect((await healthy(numbered(7), CONTEXT)).subject).toBe('message 7');
  });

  it('lets idle workers go, and starts again on the next message', async () => {
    const brief = createWorkerMailParser({ threads: 1, idleMs: 50 });
    expect((await brief(numbered(1), CONTEXT)).subject).toBe('message 1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await brief(numbered(2), CONTEXT)).subject).toBe('message 2');
  });
});
