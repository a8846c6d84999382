import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createInlineMailParser } from '../../src/mail/inline-mail-parser.js';
import { parseMail } from '../../src/mail/parse-mail.js';
import { decodeQuotedPrintable, exactAttachments } from '../helpers/exact-mime-parts.js';

/**
 * Attachments keep their exact bytes: every attachment of the real-world-shaped fixtures in
 * test/fixtures/eml/exact-bytes is byte-identical to the decoded MIME part, as an
 * independent reading of the message (test/helpers/exact-mime-parts.ts) gives it.
 */

const FIXTURES = new URL('../fixtures/eml/exact-bytes/', import.meta.url);
const names = readdirSync(FIXTURES).filter((name) => name.endsWith('.eml')).sort();
const CONTEXT = { envelopeFrom: 'sender@example.net', recipient: 'bob@tempinbox.test' };

function read(name: string): Buffer {
  return readFileSync(new URL(name, FIXTURES));
}

function digest(bytes: Uint8Array): { size: number; sha256: string } {
  return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
}

describe('the independent decoder used as the oracle', () => {
  it('reads the PGP signature exactly as written, CRLFs included, without the delimiter CRLF', () => {
    const [signature] = exactAttachments(read('pgp-mime-signed.eml'));
    expect(signature?.filename).toBe('signature.asc');
    const text = signature?.bytes.toString('latin1') ?? '';
    expect(text.startsWith('-----BEGIN PGP SIGNATURE-----\r\n\r\n')).toBe(true);
    expect(text.endsWith('\r\n-----END PGP SIGNATURE-----\r\n')).toBe(true);
    expect(text).not.toMatch(/[^\r]\n/);
  });

  it('decodes quoted-printable per RFC 2045 §6.7', () => {
    const decoded = decodeQuotedPrintable(Buffer.from('a=3Db=\r\nc \t\r\nd=0D=0A=\r\ne=\r\n'));
    expect(decoded.toString('latin1')).toBe('a=bc\r\nd\r\ne');
    expect(decodeQuotedPrintable(Buffer.from('x=\ny\nz')).toString('latin1')).toBe('xy\nz');
  });

  it('finds the parts the fixtures were written with', () => {
    const names = (file: string) => exactAttachments(read(file)).map((part) => part.filename);
    expect(names('text-attachments-trailing-newline.eml')).toEqual(['with-newline.txt', 'without-newline.txt', 'blank-lines.txt', 'empty.txt']);
    const texts = exactAttachments(read('text-attachments-trailing-newline.eml')).map((part) => part.bytes.toString('latin1'));
    expect(texts).toEqual(['first line\r\nsecond line\r\n', 'first line\r\nsecond line', '\r\n', '']);
    expect(names('message-rfc822-inline-forward.eml')).toEqual(['inner.txt']);
    expect(names('calendar-invite-base64.eml')).toEqual([null, 'invite.ics']);
  });
});

describe('attachments are byte-identical to the decoded MIME part', () => {
  it.each(names)('%s', async (name) => {
    const raw = read(name);
    const expected = exactAttachments(raw);
    const parsed = await parseMail(raw, CONTEXT);
    expect(parsed.attachments.map((a) => a.content.byteLength), 'attachment sizes').toEqual(expected.map((part) => part.bytes.byteLength));
    expect(parsed.attachments.map((a) => digest(a.content))).toEqual(expected.map((part) => digest(part.bytes)));
  });

  it('is the same through the worker-less parser with an onParseError hook (no fallback ran)', async () => {
    for (const name of names) {
      const errors: unknown[] = [];
      await createInlineMailParser({ onParseError: (error) => errors.push(error) })(read(name), CONTEXT);
      expect(errors, name).toEqual([]);
    }
  });
});

describe('Content-Type: text without a subtype is text/plain (RFC 2045 §5.2)', () => {
  it('shows a single-part body instead of storing it as a .bin attachment', async () => {
    const parsed = await parseMail(read('content-type-text-no-subtype.eml'), CONTEXT);
    expect(parsed.text).toContain('Your verification code is 482913.');
    expect(parsed.attachments).toEqual([]);
  });

  it('reads such a part of a multipart as the body, and such an attachment as text/plain', async () => {
    const parsed = await parseMail(read('content-type-text-no-subtype-multipart.eml'), CONTEXT);
    expect(parsed.text).toContain('Your report is ready: total = 42.');
    expect(parsed.attachments.map((a) => [a.filename, a.contentType])).toEqual([['report.txt', 'text/plain']]);
  });
});
