import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeRawRange } from '../domain/raw-range.js';
import type { ParsedAttachment } from '../domain/types.js';
import { parseMail } from './parse-mail.js';

const CONTEXT = { envelopeFrom: 'bounce@example.net', recipient: 'bob@tempinbox.test' };
const encoder = new TextEncoder();

function message(...lines: string[]): Uint8Array {
  return encoder.encode(lines.join('\r\n'));
}

/** base64 in 76-character lines (RFC 2045 §6.8). */
function base64Lines(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += 76) lines.push(text.slice(i, i + 76));
  return lines;
}

function withAttachment(encoding: string, body: string[]): Uint8Array {
  return message(
    'From: a@example.net',
    'To: bob@tempinbox.test',
    'Subject: files',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'see attached',
    '--b',
    'Content-Type: application/octet-stream; name="f.bin"',
    'Content-Disposition: attachment; filename="f.bin"',
    `Content-Transfer-Encoding: ${encoding}`,
    '',
    ...body,
    '--b--',
    '',
  );
}

/** The attachment as a reader of the stored message gets it back from its range. */
function fromRange(raw: Uint8Array, attachment: ParsedAttachment): Uint8Array {
  const range = attachment.rawRange;
  if (range === null || range === undefined) throw new Error('no range');
  return decodeRawRange(raw.subarray(range.start, range.end), range.encoding);
}

describe('attachments as ranges of the raw message', () => {
  it('keeps a base64 attachment as the range its bytes decode from', async () => {
    const file = new Uint8Array(randomBytes(10_000));
    const raw = withAttachment('base64', base64Lines(file));
    const [attachment] = (await parseMail(raw, CONTEXT)).attachments;
    expect(attachment?.content).toEqual(file);
    expect(attachment?.rawRange?.encoding).toBe('base64');
    expect(fromRange(raw, attachment!)).toEqual(file);
  });

  it('finds the range in a message that starts with a BOM', async () => {
    const file = new Uint8Array(randomBytes(3_000));
    const plain = withAttachment('base64', base64Lines(file));
    const raw = new Uint8Array([0xef, 0xbb, 0xbf, ...plain]);
    const [attachment] = (await parseMail(raw, CONTEXT)).attachments;
    expect(fromRange(raw, attachment!)).toEqual(file);
  });

  it('keeps an 8bit attachment as the range of its exact bytes, without the line break the delimiter owns', async () => {
    const raw = withAttachment('8bit', ['line one', 'line two\u00e9']);
    const [attachment] = (await parseMail(raw, CONTEXT)).attachments;
    expect(attachment?.rawRange?.encoding).toBe('identity');
    expect(new TextDecoder().decode(fromRange(raw, attachment!))).toBe('line one\r\nline two\u00e9');
    expect(fromRange(raw, attachment!)).toEqual(attachment?.content);
  });

  it('stores quoted-printable attachments whole', async () => {
    const raw = withAttachment('quoted-printable', ['caf=C3=A9 =', 'ok']);
    const [attachment] = (await parseMail(raw, CONTEXT)).attachments;
    expect(new TextDecoder().decode(attachment?.content)).toBe('café ok');
    expect(attachment?.rawRange).toBeNull();
  });

  it('stores whole what the range would decode differently (base64 that postal-mime reads otherwise)', async () => {
    // A stray '=' in the middle: Node's decoder and postal-mime's part ways after it.
    const raw = withAttachment('base64', ['QUJD=REVG', 'R0hJ']);
    const [attachment] = (await parseMail(raw, CONTEXT)).attachments;
    expect(new TextDecoder().decode(attachment?.content)).toBe('ABCDEFGHI');
    expect(attachment?.rawRange).toBeNull();
  });

  it('keeps base64 with spaces and stray characters as a range when it reads back the same', async () => {
    const raw = withAttachment('base64', ['QU JD', 'RE*VG']);
    const [attachment] = (await parseMail(raw, CONTEXT)).attachments;
    expect(new TextDecoder().decode(attachment?.content)).toBe('ABCDEF');
    expect(new TextDecoder().decode(fromRange(raw, attachment!))).toBe('ABCDEF');
  });

  it('stores the attachments of a nested message whole (their bytes are not a range of this one)', async () => {
    const inner = ['From: c@example.net', 'Subject: inner', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="i"', '', '--i', 'Content-Type: application/octet-stream', 'Content-Disposition: attachment; filename="in.bin"', 'Content-Transfer-Encoding: base64', '', 'AAEC', '--i--', ''];
    const raw = message(
      'From: a@example.net',
      'Subject: forward',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'see below',
      '--b',
      'Content-Type: message/rfc822',
      '',
      ...inner,
      '--b--',
      '',
    );
    const parsed = await parseMail(raw, CONTEXT);
    const nested = parsed.attachments.find((attachment) => attachment.filename === 'in.bin');
    expect(nested?.content).toEqual(new Uint8Array([0, 1, 2]));
    expect(nested?.rawRange).toBeNull();
  });
});
