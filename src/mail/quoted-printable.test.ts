import { describe, expect, it } from 'vitest';
import { decodeQuotedPrintable } from './quoted-printable.js';

const decode = (text: string) => Buffer.from(decodeQuotedPrintable(Buffer.from(text, 'latin1'))).toString('latin1');

describe('decodeQuotedPrintable (RFC 2045 §6.7)', () => {
  it('decodes escapes, in either case, and keeps hard CRLFs as CRLF', () => {
    expect(decode('caf=C3=A9 =3d ok\r\nnext\r\n')).toBe('caf\xc3\xa9 = ok\r\nnext\r\n');
  });

  it('removes a soft line break with its line break, also at the very end', () => {
    expect(decode('long =\r\nline=\r\n')).toBe('long line');
    expect(decode('no break at all=')).toBe('no break at all');
  });

  it('drops blanks added in transport at the end of a line, but not encoded ones', () => {
    expect(decode('a  \t\r\nb=20\r\nc= \r\nd')).toBe('a\r\nb \r\ncd');
  });

  it('keeps an equals sign that starts no valid escape', () => {
    expect(decode('1+1=2, =ZZ, =4')).toBe('1+1=2, =ZZ, =4');
  });

  it('keeps bare LF line breaks as LF (a message saved with Unix line endings)', () => {
    expect(decode('x=\ny\nz')).toBe('xy\nz');
  });

  it('gives encoded CR and LF as the octets they encode', () => {
    expect(decode('=0D=0A=00=FF')).toBe('\r\n\x00\xff');
  });
});
