import { describe, expect, it, vi } from 'vitest';
import type { ParsedMail } from '../domain/types.js';
import { fallbackParse } from './fallback-parse.js';
import { fallbackOrEmpty } from './inline-mail-parser.js';
import { DEFAULT_MAIL_LIMITS } from './mail-limits.js';
import { createMailParser, parseMail } from './parse-mail.js';

const CONTEXT = { envelopeFrom: 'bounce@example.net', recipient: 'bob@tempinbox.test' };
const encoder = new TextEncoder();

/** A message from lines joined with CRLF, as it arrives over SMTP. */
function message(...lines: string[]): Uint8Array {
  return encoder.encode(lines.join('\r\n'));
}

function bytes(...parts: Array<string | number[]>): Uint8Array {
  const chunks = parts.map((part) => (typeof part === 'string' ? encoder.encode(part) : new Uint8Array(part)));
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

function parse(raw: Uint8Array): Promise<ParsedMail> {
  return parseMail(raw, CONTEXT);
}

describe('parseMail: fields', () => {
  it('reads an ordinary message', async () => {
    const mail = await parse(message(
      'From: "Alice Example" <alice@example.com>',
      'To: Bob <bob@tempinbox.test>, carol@example.com',
      'Subject: Hello Bob',
      'Message-ID: <m1@example.com>',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Your code is 1234.',
      '',
    ));
    expect(mail).toEqual({
      from: '"Alice Example" <alice@example.com>',
      to: 'Bob <bob@tempinbox.test>, carol@example.com',
      subject: 'Hello Bob',
      text: 'Your code is 1234.\n',
      html: null,
      headers: [
        { name: 'From', value: '"Alice Example" <alice@example.com>' },
        { name: 'To', value: 'Bob <bob@tempinbox.test>, carol@example.com' },
        { name: 'Subject', value: 'Hello Bob' },
        { name: 'Message-ID', value: '<m1@example.com>' },
        { name: 'Content-Type', value: 'text/plain; charset=utf-8' },
      ],
      messageId: '<m1@example.com>',
      attachments: [],
      // Found at parse time (docs/api.md "What a message tells").
      codes: ['1234'],
      links: [],
    });
  });

  it('decodes RFC 2047 words in From, To, Subject and header values', async () => {
    const mail = await parse(message(
      'From: =?utf-8?B?w4lsb2RpZQ==?= <elodie@example.com>',
      'To: =?iso-8859-1?Q?J=FCrgen?= <jurgen@tempinbox.test>',
      'Subject: =?utf-8?Q?Gr=C3=BC=C3=9Fe?= aus =?utf-8?B?S8O2bG4=?=',
      'X-Note: =?utf-8?Q?caf=C3=A9?=',
      '',
      'x',
    ));
    expect(mail.from).toBe('Élodie <elodie@example.com>');
    expect(mail.to).toBe('Jürgen <jurgen@tempinbox.test>');
    expect(mail.subject).toBe('Grüße aus Köln');
    expect(mail.headers.find((header) => header.name === 'X-Note')?.value).toBe('café');
  });

  it("leaves From, To and Subject empty when absent (the service uses the envelope)", async () => {
    const mail = await parse(message('X-Only: header', '', 'body'));
    expect([mail.from, mail.to, mail.subject, mail.messageId]).toEqual(['', '', '', null]);
  });

  it('takes the first of duplicated fields', async () => {
    const mail = await parse(message('Subject: first', 'Subject: second', 'From: a@example.com', 'From: b@example.com', '', 'x'));
    expect(mail.subject).toBe('first');
    expect(mail.from).toBe('a@example.com');
    expect(mail.headers.filter((header) => header.name === 'Subject')).toHaveLength(2);
  });

  it('turns encoded line breaks and NULs in one-line fields into spaces', async () => {
    const mail = await parse(message('Subject: =?utf-8?Q?a=0D=0ABcc:_x@evil.example=00b?=', '', 'x'));
    expect(mail.subject).toBe('a Bcc: x@evil.example b');
  });

  it('reads a message that starts with a byte order mark', async () => {
    const mail = await parse(bytes([0xef, 0xbb, 0xbf], 'Subject: BOM first\r\n\r\nbody'));
    expect(mail.subject).toBe('BOM first');
    expect(mail.text).toBe('body\n');
  });

  it('reads a message without headers as text', async () => {
    const mail = await parse(encoder.encode('Just text: no headers here\nsecond line'));
    expect(mail.headers).toEqual([]);
    expect(mail.text).toBe('Just text: no headers here\nsecond line\n');
  });

  it('drops header-section lines that are not headers', async () => {
    const mail = await parse(message('Subject: ok', 'this line has no colon', '\u00a0From: evil@example.com', '', 'x'));
    expect(mail.headers.map((header) => header.name)).toEqual(['Subject']);
    expect(mail.from).toBe('');
  });

  it('accepts a Node Buffer and an empty array', async () => {
    expect((await parse(Buffer.from('Subject: buffer\r\n\r\nx'))).subject).toBe('buffer');
    expect(await parse(new Uint8Array(0))).toEqual({
      from: '', to: '', subject: '', text: '', html: null, headers: [], messageId: null, attachments: [], codes: [], links: [],
    });
  });
});

describe('parseMail: bodies', () => {
  it('sanitises HTML and derives text from it when there is no text part', async () => {
    const mail = await parse(message(
      'Subject: html',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<h2>Welcome</h2><p onclick="steal()">Click <a href="https://example.com/confirm">confirm</a>.</p><img src="https://t.example/p.gif" alt="pixel"><script>steal()</script>',
    ));
    expect(mail.html).toBe('<h2>Welcome</h2><p>Click <a href="https://example.com/confirm" target="_blank" rel="noopener noreferrer">confirm</a>.</p><img src="https://t.example/p.gif" alt="pixel" />');
    expect(mail.text).toBe('Welcome\n\nClick confirm [https://example.com/confirm].');
  });

  it('prefers the text part when both exist', async () => {
    const mail = await parse(message(
      'Content-Type: multipart/alternative; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'The text version.',
      '--b',
      'Content-Type: text/html',
      '',
      '<p>The HTML version.</p>',
      '--b--',
    ));
    expect(mail.text).toBe('The text version.\n');
    expect(mail.html).toBe('<p>The HTML version.</p>');
  });

  it('derives text from the HTML when the text part is blank', async () => {
    const mail = await parse(message(
      'Content-Type: multipart/alternative; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      '   ',
      '--b',
      'Content-Type: text/html',
      '',
      '<p>Only the HTML says something.</p>',
      '--b--',
    ));
    expect(mail.text).toBe('Only the HTML says something.');
  });

  it('gives null HTML, and no raw markup as text, when nothing survives sanitising', async () => {
    const mail = await parse(message('Content-Type: text/html', '', '<script>steal()</script><style>p{}</style>'));
    expect(mail.html).toBeNull();
    expect(mail.text).toBe('');
  });

  it('repairs windows-1252 punctuation that Node decodes as C1 controls', async () => {
    const mail = await parse(bytes('Content-Type: text/plain; charset=windows-1252\r\n\r\n', [0x93, 0x48, 0x69, 0x94, 0x20, 0x80, 0x35, 0x20, 0x96, 0x20, 0x81]));
    expect(mail.text).toBe('\u201CHi\u201D \u20AC5 \u2013 \n');
  });

  it('strips NUL and other controls from text but keeps tabs and line breaks', async () => {
    const mail = await parse(bytes('Content-Type: text/plain\r\n\r\na', [0x00, 0x07, 0x1b, 0x09], 'b\r\nc'));
    expect(mail.text).toBe('a\tb\nc\n');
  });

  it('shows the raw body when no part could be read', async () => {
    const mail = await parse(message('Subject: no boundary', 'Content-Type: multipart/mixed', '', '--x', '', 'Code 4711', '--x--'));
    expect(mail.text).toContain('Code 4711');
  });
});

describe('parseMail: attachments', () => {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMwTpv5HwAENAIyWy0K4AAAAABJRU5ErkJggg==', 'base64');

  it('maps parts to attachments with safe names, exact bytes and bare Content-IDs', async () => {
    const mail = await parse(message(
      'Content-Type: multipart/mixed; boundary="m"',
      '',
      '--m',
      'Content-Type: multipart/related; boundary="r"',
      '',
      '--r',
      'Content-Type: text/html',
      '',
      '<img src="cid:logo@x">',
      '--r',
      'Content-Type: image/png',
      'Content-Transfer-Encoding: base64',
      'Content-ID: <logo@x>',
      '',
      png.toString('base64'),
      '--r--',
      '--m',
      'Content-Type: Application/PDF; name="../../secret.pdf"',
      'Content-Disposition: attachment',
      '',
      '%PDF-1.4',
      '--m',
      'Content-Type: application/octet-stream',
      'Content-Disposition: inline; filename="photo.jpg"',
      '',
      'jpeg bytes',
      '--m',
      'Content-Type: not a type',
      'Content-Disposition: attachment',
      '',
      'junk',
      '--m--',
    ));
    expect(mail.html).toBe('<img src="cid:logo@x" />');
    expect(mail.attachments.map(({ content: _content, rawRange: _range, ...rest }) => rest)).toEqual([
      { filename: 'attachment-1.png', contentType: 'image/png', contentId: 'logo@x', inline: true },
      { filename: 'secret.pdf', contentType: 'application/pdf', contentId: null, inline: false },
      // Apple Mail marks real attachments inline: without a Content-ID it is listed.
      { filename: 'photo.jpg', contentType: 'application/octet-stream', contentId: null, inline: false },
      { filename: 'attachment-4.bin', contentType: 'application/octet-stream', contentId: null, inline: false },
    ]);
    expect(Buffer.from(mail.attachments[0]?.content ?? []).equals(png)).toBe(true);
    expect(Buffer.from(mail.attachments[1]?.content ?? []).toString()).toBe('%PDF-1.4');
  });

  it('keeps at most maxAttachments', async () => {
    const parts = Array.from({ length: 5 }, (_, i) => [`--m`, 'Content-Type: application/octet-stream', '', `part ${i}`]).flat();
    const parser = createMailParser({ limits: { maxAttachments: 3 } });
    const mail = await parser(message('Content-Type: multipart/mixed; boundary="m"', '', ...parts, '--m--'), CONTEXT);
    expect(mail.attachments.map((attachment) => attachment.filename)).toEqual(['attachment-1.bin', 'attachment-2.bin', 'attachment-3.bin']);
  });
});

describe('parseMail: limits and recovery', () => {
  it('keeps at most maxHeaders headers, each value cut to maxHeaderValueChars', async () => {
    const parser = createMailParser({ limits: { maxHeaders: 3, maxHeaderValueChars: 10 } });
    const mail = await parser(message('A: 1', 'B: 2', 'C: 0123456789abcdef', 'D: 4', 'Subject: still found', '', 'x'), CONTEXT);
    expect(mail.headers).toEqual([{ name: 'A', value: '1' }, { name: 'B', value: '2' }, { name: 'C', value: '0123456789' }]);
    expect(mail.subject).toBe('still found');
  });

  it('cuts the subject at maxSubjectChars without splitting a character', async () => {
    const mail = await parse(message(`Subject: ${'🎉'.repeat(600)}`, '', 'x'));
    expect(mail.subject.length).toBeLessThanOrEqual(DEFAULT_MAIL_LIMITS.maxSubjectChars);
    expect(mail.subject).toBe('🎉'.repeat(DEFAULT_MAIL_LIMITS.maxSubjectChars / 2));
  });

  it('cuts the text at maxTextChars', async () => {
    const parser = createMailParser({ limits: { maxTextChars: 5 } });
    expect((await parser(message('Subject: s', '', 'abcdefgh'), CONTEXT)).text).toBe('abcde');
  });

  it('falls back to the headers when the nesting limit is passed, and reports why', async () => {
    const onParseError = vi.fn();
    const parser = createMailParser({ limits: { maxNestingDepth: 2 }, onParseError });
    const nested = [0, 1, 2, 3].flatMap((level) => [`Content-Type: multipart/mixed; boundary="l${level}"`, '', `--l${level}`]);
    const mail = await parser(message('From: deep@example.com', 'Subject: too deep', ...nested, 'Content-Type: text/plain', '', 'bottom'), CONTEXT);
    expect(mail.subject).toBe('too deep');
    expect(mail.from).toBe('deep@example.com');
    expect(mail.text).toContain('bottom');
    expect(mail.attachments).toEqual([]);
    expect(onParseError).toHaveBeenCalledOnce();
    expect(String(onParseError.mock.calls[0]?.[0])).toMatch(/nesting depth/);
  });

  it('falls back when the headers pass maxHeaderBytes', async () => {
    const onParseError = vi.fn();
    const parser = createMailParser({ onParseError });
    const filler = Array.from({ length: 12_000 }, (_, i) => `X-Filler-${i}: ${'v'.repeat(80)}`);
    const mail = await parser(message('Subject: header bomb', 'From: bomb@example.com', ...filler, '', 'body text'), CONTEXT);
    expect(onParseError).toHaveBeenCalledOnce();
    expect(mail.subject).toBe('header bomb');
    expect(mail.from).toBe('bomb@example.com');
    expect(mail.headers).toHaveLength(DEFAULT_MAIL_LIMITS.maxHeaders);
    expect(mail.text).toBe('body text');
  });

  it('falls back, in linear time, for messages with too many lines for the MIME parser', async () => {
    const onParseError = vi.fn();
    const parser = createMailParser({ onParseError });
    const started = performance.now();
    const mail = await parser(encoder.encode(`Subject: many lines\r\n\r\n${'a\n'.repeat(2_000_000)}`), CONTEXT);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(String(onParseError.mock.calls[0]?.[0])).toMatch(/lines/);
    expect(mail.subject).toBe('many lines');
    expect(mail.text.startsWith('a\na\n')).toBe(true);
  });

  it('falls back for messages with too many parts for the MIME parser', async () => {
    const onParseError = vi.fn();
    const parser = createMailParser({ limits: { maxParts: 10 }, onParseError });
    const parts = Array.from({ length: 20 }, () => '--w').join('\r\n');
    const mail = await parser(message('Subject: wide', 'Content-Type: multipart/mixed; boundary=w', '', parts, '--w--'), CONTEXT);
    expect(String(onParseError.mock.calls[0]?.[0])).toMatch(/boundary-like lines/);
    expect(mail.subject).toBe('wide');
  });

  it('survives a reporter that throws', async () => {
    const parser = createMailParser({
      limits: { maxNestingDepth: 0 },
      onParseError: () => {
        throw new Error('logger down');
      },
    });
    const mail = await parser(message('Subject: s', 'Content-Type: multipart/mixed; boundary=b', '', '--b', '', 'x', '--b--'), CONTEXT);
    expect(mail.subject).toBe('s');
  });

  it('never rejects on mutated messages', async () => {
    const seed = message(
      'From: "A" <a@example.com>', 'Subject: =?utf-8?B?w4k=?=', 'Content-Type: multipart/mixed; boundary="b"', '',
      '--b', 'Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable', '', '<p onclick=3D"x()">hi=C3=A9</p>',
      '--b', 'Content-Type: application/pdf; name="a.pdf"', 'Content-Transfer-Encoding: base64', '', 'JVBERi0xLjQK', '--b--',
    );
    let state = 12345;
    const next = (): number => {
      state = (state * 1103515245 + 12345) >>> 0;
      return state;
    };
    for (let round = 0; round < 300; round++) {
      const mutated = new Uint8Array(seed);
      for (let flips = 1 + (next() % 8); flips > 0; flips--) mutated[next() % mutated.length] = next() & 0xff;
      const mail = await parse(mutated);
      expect(mail.html ?? '').not.toMatch(/<script|\son\w+=|javascript:/i);
      for (const attachment of mail.attachments) expect(attachment.filename).not.toMatch(/[/\\]|^\./);
    }
  });
});

describe('fallbackParse', () => {
  it('decodes a single base64 text part', () => {
    const raw = message('Subject: b64', 'Content-Transfer-Encoding: base64', '', Buffer.from('decoded body').toString('base64'));
    expect(fallbackParse(raw, DEFAULT_MAIL_LIMITS).text).toBe('decoded body');
  });

  it('sanitises a single HTML part', () => {
    const mail = fallbackParse(message('Content-Type: text/html', '', '<p onclick="x()">hi</p><script>x()</script>'), DEFAULT_MAIL_LIMITS);
    expect(mail.html).toBe('<p>hi</p>');
    expect(mail.text).toBe('hi');
  });

  it('unfolds headers and skips lines that are not headers', () => {
    const mail = fallbackParse(message('Subject: folded', '  across lines', 'not a header', 'To: x@example.com', '', 'b'), DEFAULT_MAIL_LIMITS);
    expect(mail.subject).toBe('folded  across lines');
    expect(mail.headers.map((header) => header.name)).toEqual(['Subject', 'To']);
  });
});

describe('parseMail: codes and links', () => {
  it('finds them once, at parse time: codes from subject and text, links from the sanitised HTML', async () => {
    const mail = await parse(Buffer.from(
      'Subject: 739201 is your login code\r\nContent-Type: text/html; charset=utf-8\r\n\r\n' +
        '<p>Or click <a href="https://example.com/login?t=1">Sign in</a> <a href="javascript:alert(1)">x</a></p>\r\n',
    ));
    expect(mail.codes).toEqual(['739201']);
    expect(mail.links).toEqual([{ url: 'https://example.com/login?t=1', text: 'Sign in' }]);
  });

  it('the header-only fallback takes codes from the subject alone and no links', async () => {
    const mail = fallbackOrEmpty(Buffer.from('Subject: Code 482913\r\nContent-Type: text/plain\r\n\r\nhttps://example.com/x and 555123\r\n'), DEFAULT_MAIL_LIMITS, () => undefined);
    expect(mail.codes).toEqual(['482913']);
    expect(mail.links).toEqual([]);
  });
});
