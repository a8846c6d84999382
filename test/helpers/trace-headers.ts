import { expect } from 'vitest';

/** What the trace lines of a stored message must say (RFC 5321 §4.4, docs/api.md "SMTP"). */
export interface ExpectedTrace {
  envelopeFrom: string;
  helo: string;
  /** The address literal, e.g. `[127.0.0.1]`. */
  client: string;
  server: string;
  protocol: 'SMTP' | 'ESMTP' | 'ESMTPS';
  /** The exact date line; default any RFC 5322 date in UTC. */
  date?: string;
}

/** An RFC 5322 date-time as the server writes it (always UTC). */
const DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} \+0000$/;
/** Transaction ids are random 22-character base64url strings (domain/ids.ts). */
const ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * Asserts that a stored raw message begins with exactly the server's four trace lines
 * (Return-Path, Received folded over three lines) and returns the transaction id and the
 * bytes after them, which the caller compares byte for byte with what was sent.
 */
export function splitTrace(raw: Buffer | string, expected: ExpectedTrace): { id: string; rest: Buffer } {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  let offset = 0;
  const lines: string[] = [];
  for (let i = 0; i < 4; i += 1) {
    const end = bytes.indexOf('\r\n', offset);
    expect(end, `trace line ${i + 1} ends with CRLF`).toBeGreaterThanOrEqual(0);
    lines.push(bytes.subarray(offset, end).toString('utf8'));
    offset = end + 2;
  }
  const [returnPath, received, by, date] = lines;
  expect(returnPath).toBe(`Return-Path: <${expected.envelopeFrom}>`);
  expect(received).toBe(`Received: from ${expected.helo} (${expected.client})`);
  const byLine = /^\tby (\S+) with (\S+) id (\S+);$/.exec(by ?? '');
  expect(byLine, `by-line ${JSON.stringify(by)}`).not.toBeNull();
  expect(byLine?.[1]).toBe(expected.server);
  expect(byLine?.[2]).toBe(expected.protocol);
  const id = byLine?.[3] ?? '';
  expect(id).toMatch(ID);
  if (expected.date !== undefined) expect(date).toBe(`\t${expected.date}`);
  else expect((date ?? '').slice(1)).toMatch(DATE);
  expect(date?.startsWith('\t')).toBe(true);
  return { id, rest: bytes.subarray(offset + ourAuthenticationResults(bytes.subarray(offset), expected.server)) };
}

/**
 * Length of the `Authentication-Results:` header the server adds right after its trace lines
 * when MAIL_AUTH=on (docs/api.md "Sender authentication"): only one naming our server as
 * authserv-id, with its folded lines; 0 when there is none.
 */
function ourAuthenticationResults(bytes: Buffer, server: string): number {
  const prefix = `Authentication-Results: ${server};`;
  if (bytes.subarray(0, prefix.length).toString('latin1') !== prefix) return 0;
  const text = bytes.toString('latin1');
  const end = /\r\n(?![ \t])/.exec(text);
  expect(end, 'the Authentication-Results header ends with CRLF').not.toBeNull();
  return (end?.index ?? 0) + 2;
}
