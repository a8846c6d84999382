import { describe, expect, it } from 'vitest';
import { extractCodes } from './extract-codes.js';
import { extractLinks } from './extract-links.js';
import { extractMessageCodes } from './message-codes.js';
import { sanitizeMailHtml } from './sanitize-html.js';

/** What the contract allows one megabyte of any text to cost in code and link finding. */
const BUDGET_MS = 50;

const PROBE = 64 * 1024;
const SMALL = 256 * 1024;
const LARGE = 1024 * 1024;

/**
 * Linear work on 4× the input costs 4× the time; quadratic, 16×. 8× plus a little constant
 * (timer resolution, a stray collection) tells them apart without failing on noise.
 */
const MAX_GROWTH = 8;
const GROWTH_SLACK_MS = 10;
/** Sittings measured again when one misses, each keeping the cheapest run. */
const REMEASURES = 3;

/** `unit` repeated to `size` characters, with `head` and `tail` around it. */
function fill(size: number, unit: string, head = '', tail = ''): string {
  const body = unit.repeat(Math.ceil((size - head.length - tail.length) / unit.length));
  return head + body.slice(0, Math.max(0, size - head.length - tail.length)) + tail;
}

/** Hostile text of a given size: each stresses a pattern that could backtrack or rescan. */
const TEXTS: Record<string, (size: number) => string> = {
  'a URL followed by dots, then a letter': (size) => fill(size, '.', 'http://a.test/', 'x'),
  'a URL followed by dots to the end': (size) => fill(size, '.', 'http://a.test/'),
  'a URL followed by closing punctuation, then a letter': (size) => fill(size, ').,;!?]}>»', 'https://a.test/', 'x'),
  'a URL with nested brackets': (size) => `https://a.test/${fill(size / 2, '(')}${fill(size / 2, ')')}`,
  'a run of http://': (size) => fill(size, 'http://'),
  'a run of https://x': (size) => fill(size, 'https://x'),
  'a run of www.': (size) => fill(size, 'www.'),
  'one long URL': (size) => fill(size, 'a', 'https://a.test/'),
  'many short URLs': (size) => fill(size, 'https://a.test/1 '),
  'a run of digits': (size) => fill(size, '7'),
  'digits and spaces alternating': (size) => fill(size, '7 '),
  'digit pairs and spaces': (size) => fill(size, '71 '),
  'digits and dots': (size) => fill(size, '1.'),
  'digits and hyphens': (size) => fill(size, '1234-'),
  'upper-case letters and digits with hyphens': (size) => fill(size, 'A7-'),
  'a repeated keyword': (size) => fill(size, 'code '),
  'long words of keywords, each then a digit': (size) => fill(size, `${'code'.repeat(4096)}1 `, 'x 482913 '),
  'long words of keyword stems, each then a digit': (size) => fill(size, `${'codkodкод'.repeat(2048)}1 `, 'x 482913 '),
  'keywords and codes': (size) => fill(size, 'code 123456 '),
  'keywords and negatives': (size) => fill(size, 'zip code order code '),
  'negatives and numbers': (size) => fill(size, 'order #482913 '),
  'keywords on their own lines': (size) => fill(size, 'Your code:\n\n'),
  'codes on their own lines': (size) => fill(size, '482913\n'),
  'blank lines': (size) => fill(size, '\n'),
  'a megabyte on one line of sentences': (size) => fill(size, 'Your code is 482913 and it expires in 10 minutes. '),
  'addresses': (size) => fill(size, 'a@b.'),
  'a long local part then @': (size) => fill(size, `${'a'.repeat(70)}@`),
  'a long word then @': (size) => fill(size, 'a', '', '@x.test'),
  'mixed scripts': (size) => fill(size, 'код 验证码 481029 كود コード ４８２９１３ ΚΩΔ '),
  'spaces': (size) => fill(size, ' '),
  'punctuation': (size) => fill(size, '.:,;/'),
  'currency and units': (size) => fill(size, '$1 2 min '),
};

/** Hostile HTML, sanitised first (as on ingest) outside the timed part. */
const HTMLS: Record<string, (size: number) => string> = {
  'many anchors': (size) => fill(size, '<a href="https://x.test/p">code 4821</a> '),
  'many distinct anchors': (size) => Array.from({ length: Math.ceil(size / 40) }, (_, i) => `<a href="https://x.test/${i}">go</a>`).join(''),
  'nested anchors': (size) => fill(size, '<a href="https://x.test/">x '),
  'nested spans': (size) => fill(size, '<span>'),
  'a URL and dots in HTML text': (size) => `<p>${fill(size, '.', 'http://a.test/', 'x')}</p>`,
  'styled elements': (size) => fill(size, '<span style="color:red;display:inline">482913</span>'),
  'paragraphs': (size) => fill(size, '<p>Your code is 482913</p>'),
  'a single text line': (size) => `<div>${fill(size, 'word ')}</div>`,
  'hidden elements': (size) => fill(size, '<div style="display:none">Your code: 482913</div>'),
  'zero-size text with styles to read': (size) => fill(size, '<span style="font-size:0;color:transparent;opacity:0.5">Code 482913</span>'),
  'table cells': (size) => fill(size, '<td>7</td>', '<table><tr>'),
  // Each style different, so no effect read once serves another element.
  'distinct styles': (size) =>
    Array.from({ length: Math.ceil(size / 60) }, (_, i) => `<span style="color:#${(i % 4096).toString(16)};font-size:${i}px">7</span>`).join(''),
  'preformatted lines': (size) => `<pre>${fill(size, 'code 482913\n')}</pre>`,
};

/**
 * CPU time of this thread in ms. The budget is what the work costs; wall time on a shared
 * two-core machine would mostly measure the neighbours.
 */
function cpuMs(): number {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** What one run of `work` costs: the cheapest of a few (after one warm-up), `repeat` runs each. */
function cost(work: () => unknown, repeat = 1): number {
  work();
  let best = Number.POSITIVE_INFINITY;
  for (let trial = 0; trial < 3; trial += 1) {
    const started = cpuMs();
    for (let run = 0; run < repeat; run += 1) work();
    best = Math.min(best, (cpuMs() - started) / repeat);
  }
  return best;
}

/**
 * Times `work` on 64 KiB (once, failing fast: a quadratic pattern takes minutes on a
 * megabyte), 256 KiB and 1 MiB; the megabyte must cost less than the budget (per MiB of the
 * actual input, which sanitised HTML can double), and growth must be about linear.
 */
function expectLinear(label: string, work: (size: number) => { length: number; run: () => unknown }): void {
  work(4 * 1024).run();
  const probe = work(PROBE);
  const started = cpuMs();
  probe.run();
  const probed = cpuMs() - started;
  expect(probed, `${label}: 64 KiB took ${probed.toFixed(1)} ms`).toBeLessThan(BUDGET_MS);
  const smallRun = work(SMALL).run;
  let small = cost(smallRun, 4);
  const large = work(LARGE);
  let spent = cost(large.run);
  const budget = BUDGET_MS * Math.max(1, large.length / LARGE);
  // CPU time in a virtual machine also counts the time the host took the core away, so a
  // busy neighbour can inflate one sitting: measure again, keeping the cheapest. Noise only
  // ever adds, so a quadratic pattern (16× the 256 KiB cost, every time) still fails.
  for (let again = 0; again < REMEASURES && (spent >= budget || spent >= MAX_GROWTH * small + GROWTH_SLACK_MS); again += 1) {
    small = Math.min(small, cost(smallRun, 4));
    spent = Math.min(spent, cost(large.run));
  }
  expect(spent, `${label}: 1 MiB took ${spent.toFixed(1)} ms`).toBeLessThan(budget);
  expect(spent, `${label}: ${small.toFixed(2)} ms for 256 KiB, ${spent.toFixed(2)} ms for 1 MiB`).toBeLessThan(MAX_GROWTH * small + GROWTH_SLACK_MS);
}

describe('text analysis is linear: 1 MiB of hostile text costs < 50 ms', () => {
  it.each(Object.keys(TEXTS))('codes: %s', (name) => {
    const make = TEXTS[name] ?? ((): string => '');
    expectLinear(name, (size) => {
      const text = make(size);
      return { length: text.length, run: () => extractCodes('', text) };
    });
  });

  it.each(Object.keys(TEXTS))('codes in the subject: %s', (name) => {
    const make = TEXTS[name] ?? ((): string => '');
    expectLinear(name, (size) => {
      const subject = make(size);
      return { length: subject.length, run: () => extractCodes(subject, '') };
    });
  });

  it.each(Object.keys(TEXTS))('links in text: %s', (name) => {
    const make = TEXTS[name] ?? ((): string => '');
    expectLinear(name, (size) => {
      const text = make(size);
      return { length: text.length, run: () => extractLinks(null, text) };
    });
  });

  it.each(Object.keys(HTMLS))('links in HTML: %s', (name) => {
    const make = HTMLS[name] ?? ((): string => '');
    expectLinear(name, (size) => {
      const html = sanitizeMailHtml(make(size));
      return { length: html.length, run: () => extractLinks(html, '') };
    });
  });

  it.each(Object.keys(HTMLS))('codes in HTML (its visible text): %s', (name) => {
    const make = HTMLS[name] ?? ((): string => '');
    expectLinear(name, (size) => {
      const html = sanitizeMailHtml(make(size));
      return { length: html.length, run: () => extractMessageCodes('Your code', { html, text: '' }) };
    });
  });

  it.each(Object.keys(TEXTS))('codes in the text of HTML: %s', (name) => {
    const make = TEXTS[name] ?? ((): string => '');
    expectLinear(name, (size) => {
      const html = `<p>${make(size).replace(/[<>&]/g, ' ')}</p>`;
      return { length: html.length, run: () => extractMessageCodes('', { html, text: '' }) };
    });
  });

  it.each(Object.keys(TEXTS))('links in the text of HTML: %s', (name) => {
    const make = TEXTS[name] ?? ((): string => '');
    expectLinear(name, (size) => {
      const html = `<p>${make(size).replace(/[<>&]/g, ' ')}</p>`;
      return { length: html.length, run: () => extractLinks(html, '') };
    });
  });
});
