import { describe, expect, it } from 'vitest';
import { RENAMED_FIELD_NAME, renameClaimedAuthenticationResults } from './claimed-authentication-results.js';
import { FRONT_ROOM_BYTES, joinWithRoomInFront, withPrefix } from './message-bytes.js';

const OURS = ['tempinbox.test', 'mail.tempinbox.test'];
const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'latin1'));
const text = (value: Uint8Array): string => Buffer.from(value).toString('latin1');
const renamed = (message: string): string => text(renameClaimedAuthenticationResults(bytes(message), OURS));

describe('renameClaimedAuthenticationResults', () => {
  it('renames a field naming our server and nothing else; the value and every other byte stay', () => {
    const message = 'From: a@bank.test\r\nAuthentication-Results: tempinbox.test;\r\n\tdmarc=pass header.from=bank.test\r\nAuthentication-Results: mx.bank.test; spf=pass\r\nSubject: hi\r\n\r\nbody\r\n';
    expect(renamed(message)).toBe(message.replace('Authentication-Results: tempinbox.test;', `${RENAMED_FIELD_NAME}: tempinbox.test;`));
  });

  it('reads the authserv-id past comments, folding, quotes and case, and a version after it', () => {
    const claims = [
      'Authentication-Results: tempinbox.test; none',
      'authentication-results: TEMPINBOX.TEST.; dkim=pass',
      'AUTHENTICATION-RESULTS:(a (nested) comment)\r\n  tempinbox.test 1; spf=pass',
      'Authentication-Results:"tempinbox.test"; dmarc=pass',
      'Authentication-Results: "temp\\inbox.test"; dmarc=pass',
      'Authentication-Results \t: mail.tempinbox.test; dmarc=pass',
      'Authentication-Results: (x\\) still a comment) tempinbox.test(trailing);dmarc=pass',
    ];
    for (const claim of claims) {
      const message = `${claim}\r\nFrom: a@bank.test\r\n\r\nbody\r\n`;
      expect(renamed(message), claim).toBe(`${RENAMED_FIELD_NAME}${message.slice('Authentication-Results'.length)}`);
    }
  });

  it('leaves other servers, look-alikes and what is not a field of the header alone, as the same view', () => {
    const untouched = [
      'Authentication-Results: mx.bank.test; dkim=pass\r\n\r\nbody\r\n',
      'Authentication-Results: tempinbox.test.evil.test; dkim=pass\r\n\r\n',
      'Authentication-Results: evil-tempinbox.test; dkim=pass\r\n\r\n',
      'Authentication-Results: ; dkim=pass tempinbox.test\r\n\r\n',
      'Authentication-Results: (tempinbox.test) other.test; dkim=pass\r\n\r\n',
      'X-Authentication-Results: tempinbox.test; dkim=pass\r\n\r\n',
      'ARC-Authentication-Results: i=1; tempinbox.test; dkim=pass\r\n\r\n',
      'Authentication-Results-X: tempinbox.test\r\n\r\n',
      'Authentication\rResults: tempinbox.test\r\n\r\n',
      'Subject: a\r\n Authentication-Results: tempinbox.test; a folded line, not a field\r\n\r\n',
      'From: a@bank.test\r\n\r\nAuthentication-Results: tempinbox.test; in the body\r\n',
      'From: a@bank.test\n\nAuthentication-Results: tempinbox.test; in the body after a bare LF\n',
      '',
    ];
    for (const message of untouched) {
      const input = bytes(message);
      expect(renameClaimedAuthenticationResults(input, OURS), JSON.stringify(message)).toBe(input);
    }
  });

  it('works with bare LF line ends and at the very end of a message without a body', () => {
    expect(renamed('From: a\nAuthentication-Results: tempinbox.test;\n dkim=pass\nTo: b\n\nx\n')).toBe(
      `From: a\n${RENAMED_FIELD_NAME}: tempinbox.test;\n dkim=pass\nTo: b\n\nx\n`,
    );
    expect(renamed('Authentication-Results: tempinbox.test')).toBe(`${RENAMED_FIELD_NAME}: tempinbox.test`);
  });

  it('renames every claim, and keeps the room in front for our own header (one copy in all)', () => {
    const message = 'Authentication-Results: tempinbox.test; a\r\nX: 1\r\nAuthentication-Results: mail.tempinbox.test; b\r\n\r\n';
    const received = joinWithRoomInFront([bytes(message)], message.length);
    const out = renameClaimedAuthenticationResults(received, OURS);
    expect(text(out)).toBe(`${RENAMED_FIELD_NAME}: tempinbox.test; a\r\nX: 1\r\n${RENAMED_FIELD_NAME}: mail.tempinbox.test; b\r\n\r\n`);
    expect(out.byteOffset).toBe(FRONT_ROOM_BYTES);
    const stored = withPrefix([bytes('Received: x\r\n')], out);
    expect(stored.buffer).toBe(out.buffer);
  });

  it('never copies a megabyte-long authserv-id out, and stays linear on a huge header', () => {
    const long = `Authentication-Results: ${'t'.repeat(1_000_000)}; dkim=pass\r\n`;
    const comments = `Authentication-Results: ${'('.repeat(200_000)}${')'.repeat(200_000)} tempinbox.test; x\r\n`;
    const many = 'Authentication-Results: other.test; x\r\n'.repeat(50_000);
    const started = performance.now();
    expect(renamed(`${long}\r\n`)).toBe(`${long}\r\n`);
    expect(renamed(`${comments}\r\n`).startsWith(`${RENAMED_FIELD_NAME}: ((`)).toBe(true);
    expect(renamed(`${many}\r\n`)).toBe(`${many}\r\n`);
    // About 3 MB of header in all: a few ms each when linear; a quadratic scan takes minutes.
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
