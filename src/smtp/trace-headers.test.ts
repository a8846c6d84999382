import { describe, expect, it } from 'vitest';
import { addressLiteral, rfc5322Date, traceHeaders } from './trace-headers.js';

const BASE = {
  envelopeFrom: 'a@example.org',
  helo: 'client.example',
  clientAddress: '192.0.2.1',
  serverName: 'mx.example',
  protocol: 'ESMTP',
  id: 'AAAAAAAAAAAAAAAAAAAAAA',
  date: new Date(Date.UTC(2026, 1, 2, 3, 4, 5)),
};

describe('traceHeaders', () => {
  it('writes Return-Path and a folded Received (RFC 5321 §4.4)', () => {
    expect(traceHeaders(BASE).toString('utf8')).toBe(
      'Return-Path: <a@example.org>\r\n' +
        'Received: from client.example ([192.0.2.1])\r\n' +
        '\tby mx.example with ESMTP id AAAAAAAAAAAAAAAAAAAAAA;\r\n' +
        '\tMon, 02 Feb 2026 03:04:05 +0000\r\n',
    );
  });

  it('writes the client address as an RFC 5321 address literal', () => {
    expect(addressLiteral('2001:db8::1')).toBe('[IPv6:2001:db8::1]');
    expect(addressLiteral('::ffff:192.0.2.1')).toBe('[192.0.2.1]');
    expect(addressLiteral('192.0.2.1')).toBe('[192.0.2.1]');
  });

  it('never lets client-supplied text break a line or the header grammar', () => {
    const text = traceHeaders({ ...BASE, envelopeFrom: 'x>\r\nBcc: y@z', helo: 'evil\r\nX-Injected: 1', protocol: 'ESMTP\r\nX: 1' }).toString('utf8');
    expect(text.split('\r\n')).toHaveLength(5);
    expect(text).toContain('Return-Path: <xBcc:y@z>\r\n');
    expect(text).toContain('Received: from unknown ([192.0.2.1])\r\n');
    expect(text).toContain(' with ESMTP id ');
  });

  it('pads the RFC 5322 date and always writes UTC', () => {
    expect(rfc5322Date(new Date(Date.UTC(2027, 11, 31, 23, 59, 9)))).toBe('Fri, 31 Dec 2027 23:59:09 +0000');
  });
});
