import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../../test/fixtures/codes/load-corpus.js';
import { extractLinks, MAX_LINK_TEXT_CHARS, MAX_LINKS, MAX_URL_CHARS } from './extract-links.js';
import { sanitizeMailHtml } from './sanitize-html.js';

/** Links as the product computes them: from the sanitiser's output, never from raw HTML. */
const linksOf = (html: string, text = ''): ReturnType<typeof extractLinks> => extractLinks(sanitizeMailHtml(html), text);

describe('extractLinks: from sanitised HTML', () => {
  it('lists anchors in document order with their visible text, whitespace collapsed', () => {
    const html = '<p><a href="https://a.example/1">  First\n <b>link</b> </a> and <a href="https://b.example/2?x=1&amp;y=2">Second</a></p>';
    expect(linksOf(html)).toEqual([
      { url: 'https://a.example/1', text: 'First link' },
      { url: 'https://b.example/2?x=1&y=2', text: 'Second' },
    ]);
  });

  it('keeps the first of each URL, with its text', () => {
    const html = '<a href="https://x.example/verify">Verify email</a><p>or</p><a href="https://x.example/verify">https://x.example/verify</a>';
    expect(linksOf(html)).toEqual([{ url: 'https://x.example/verify', text: 'Verify email' }]);
  });

  it('gives "" as the text of an image-only link and separates words across blocks', () => {
    const html = '<a href="https://shop.example/"><img src="https://shop.example/logo.png" alt="Shop"></a><a href="https://shop.example/b">Line<br>two</a>';
    expect(linksOf(html)).toEqual([
      { url: 'https://shop.example/', text: '' },
      { url: 'https://shop.example/b', text: 'Line two' },
    ]);
  });

  it('lists bare URLs in the HTML text too, with "" as their text, in order', () => {
    const html = '<p>Copy this: https://r.example/magic?t=1.</p><p><a href="https://r.example/help">Help</a></p>';
    expect(linksOf(html)).toEqual([
      { url: 'https://r.example/magic?t=1', text: '' },
      { url: 'https://r.example/help', text: 'Help' },
    ]);
  });

  it('never lists a URL the sanitiser removed (hostile HTML through the real sanitiser)', () => {
    const hostile = [
      '<a href="javascript:alert(1)">js</a>',
      '<a href="JaVaScRiPt&colon;alert(2)">js entity</a>',
      '<a href=" java\tscript:alert(3)">js tab</a>',
      '<a href="/relative/482913">relative</a>',
      '<a href="//evil.example/proto-relative">protocol-relative</a>',
      '<a href="data:text/html;base64,PHNjcmlwdD4=">data</a>',
      '<a href="vbscript:msgbox">vbscript</a>',
      '<iframe src="https://evil.example/frame"><a href="https://evil.example/in-iframe">in iframe</a></iframe>',
      '<svg><a href="https://evil.example/in-svg">in svg</a></svg>',
      '<math><a href="https://evil.example/in-math">in math</a></math>',
      '<script>var u = "https://evil.example/in-script";</script>',
      '<style>a { background: url(https://evil.example/in-style) }</style>',
      '<textarea>https://evil.example/in-textarea</textarea>',
      '<form action="https://evil.example/form"><button formaction="https://evil.example/btn">Go</button></form>',
      '<img src="https://evil.example/pixel.png">',
      '<area href="https://evil.example/area">',
      '<base href="https://evil.example/"><link href="https://evil.example/css">',
      '<a href="https://good.example/ok" onclick="steal()">the <i>real</i> link</a>',
    ].join('');
    const links = linksOf(hostile);
    expect(links).toEqual([{ url: 'https://good.example/ok', text: 'the real link' }]);
  });

  it('lists no mailto or tel links (only http and https)', () => {
    expect(linksOf('<a href="mailto:help@x.example">mail</a><a href="tel:+4930123">call</a>')).toEqual([]);
  });
});

describe('extractLinks: from text when there is no HTML', () => {
  it('finds bare URLs in order, without trailing punctuation or brackets, deduplicated', () => {
    const text = 'Verify: https://a.example/v?c=1. Or [https://b.example/x]\n(see https://en.wikipedia.example/wiki/Foo_(bar)) and https://a.example/v?c=1 again';
    expect(extractLinks(null, text)).toEqual([
      { url: 'https://a.example/v?c=1', text: '' },
      { url: 'https://b.example/x', text: '' },
      { url: 'https://en.wikipedia.example/wiki/Foo_(bar)', text: '' },
    ]);
  });

  it('uses the text when the HTML is empty, and ignores other schemes', () => {
    expect(extractLinks('', 'ftp://x.example/a javascript:alert(1) http://ok.example/')).toEqual([{ url: 'http://ok.example/', text: '' }]);
  });

  it('returns [] when there is no link', () => {
    expect(extractLinks(null, 'Your code is 482913')).toEqual([]);
  });
});

describe('extractLinks: bounds on hostile input', () => {
  it(`keeps at most ${MAX_LINKS} links`, () => {
    const html = Array.from({ length: MAX_LINKS + 50 }, (_, i) => `<a href="https://x.example/${i}">${i}</a>`).join(' ');
    const links = extractLinks(sanitizeMailHtml(html), '');
    expect(links).toHaveLength(MAX_LINKS);
    expect(links.at(-1)?.url).toBe(`https://x.example/${MAX_LINKS - 1}`);
    expect(extractLinks(null, Array.from({ length: MAX_LINKS + 5 }, (_, i) => `https://t.example/${i}`).join(' '))).toHaveLength(MAX_LINKS);
  });

  it(`skips (never cuts) URLs longer than ${MAX_URL_CHARS} characters, and cuts long link text`, () => {
    const long = `https://x.example/${'a'.repeat(MAX_URL_CHARS)}`;
    const html = `<a href="${long}">long</a><a href="https://x.example/ok">${'word '.repeat(1000)}</a>`;
    const links = linksOf(html, '');
    expect(links.map((link) => link.url)).toEqual(['https://x.example/ok']);
    expect(links[0]?.text.length).toBeLessThanOrEqual(MAX_LINK_TEXT_CHARS);
    expect(extractLinks(null, long)).toEqual([]);
  });

  it('handles a megabyte of nested anchors and text quickly', () => {
    const html = `${'<a href="https://x.example/">'.repeat(20_000)}${'x '.repeat(200_000)}`;
    const started = performance.now();
    const links = linksOf(html);
    // The nesting bound cut the markup before its text: only empty anchors are left, and a
    // link with nothing in it is nothing a reader can see or click.
    expect(links).toEqual([]);
    // Generous for a loaded 2-core machine; the work is linear (a few tens of ms here).
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('extractLinks: corpus messages with expected links', () => {
  const messages = loadCorpus().filter((message) => message.links !== null);

  it('has messages with links to check', () => {
    expect(messages.length).toBeGreaterThanOrEqual(15);
  });

  it.each(messages.map((message) => [message.id, message] as const))('%s', (_id, message) => {
    expect(extractLinks(message.html, message.text)).toEqual(message.links);
  });
});
