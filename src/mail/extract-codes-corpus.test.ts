import { describe, expect, it } from 'vitest';
import { loadCorpus, measureCodes } from '../../test/fixtures/codes/load-corpus.js';
import { MAX_CODES } from './extract-codes.js';
import { extractMessageCodes } from './message-codes.js';

/** Targets of docs/codes.md: nearly every code found, and almost nothing found that is not one. */
const MIN_PRECISION = 0.98;
const MIN_RECALL = 0.95;

const corpus = loadCorpus();

describe('codes corpus', () => {
  it('has at least 150 messages, a third without a code, in 13 languages', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(150);
    expect(corpus.filter((message) => message.codes.length === 0).length * 3).toBeGreaterThanOrEqual(corpus.length);
    expect(new Set(corpus.map((message) => message.lang))).toEqual(new Set(['en', 'de', 'fr', 'es', 'pt', 'it', 'nl', 'pl', 'ru', 'tr', 'zh', 'ja', 'ko']));
    expect(new Set(corpus.map((message) => message.id)).size).toBe(corpus.length);
  });

  // Every message runs; a single miss does not fail the suite, the totals below do.
  it.each(corpus.map((message) => [message.id, message] as const))('%s', (_id, message) => {
    const codes = extractMessageCodes(message.subject, message);
    expect(codes.length).toBeLessThanOrEqual(MAX_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^[A-Z0-9-]+$/);
  });

  it(`finds codes with precision >= ${MIN_PRECISION * 100} % and recall >= ${MIN_RECALL * 100} %`, () => {
    const metrics = measureCodes(corpus);
    const misses = metrics.results
      .filter((result) => result.missed.length > 0 || result.wrong.length > 0)
      .map((result) => `${result.message.id}: missed [${result.missed.join(', ')}] wrong [${result.wrong.join(', ')}]`);
    expect(metrics.precision, misses.join('\n')).toBeGreaterThanOrEqual(MIN_PRECISION);
    expect(metrics.recall, misses.join('\n')).toBeGreaterThanOrEqual(MIN_RECALL);
  });

  // The messages whose whole point is a tempting number that is not a code.
  const negatives = corpus.filter((message) => message.negative !== null && message.codes.length === 0);
  it.each(negatives.map((message) => [`${message.id} (${message.negative ?? ''})`, message] as const))('never a code: %s', (_label, message) => {
    expect(extractMessageCodes(message.subject, message)).toEqual([]);
  });
});
