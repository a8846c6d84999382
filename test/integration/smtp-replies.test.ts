import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/domain/types.js';
import { StoreUnavailableError, type InsertOutcome, type StorePolicy } from '../../src/ports/mail-store.js';
import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { startSmtpFixture, TEST_MAX_MESSAGE_BYTES, type SmtpFixture } from '../helpers/smtp-fixture.js';
import { playSession, type ScriptStep } from '../helpers/smtp-script.js';
import { splitTrace, type ExpectedTrace } from '../helpers/trace-headers.js';
import { countMessages } from '../helpers/store-reads.js';

/**
 * docs/api.md "SMTP" as scripts: each test plays (command → expected reply)
 * against the real listener on port 0, over a real DeliveryService and the memory store.
 */

let mx: SmtpFixture;
beforeEach(async () => {
  mx = await startSmtpFixture();
});
afterEach(async () => {
  await mx.close();
});

const EHLO: ScriptStep = { send: 'EHLO client.example.org', expect: 250 };
const MAIL: ScriptStep = { send: 'MAIL FROM:<sender@example.org>', expect: /^250 2\.1\.0 / };
const ACCEPTED = /^250 2\.1\.5 /;
/** Whole reply lines: one enhanced code, never smtp-server's derived one in front of ours. */
const NO_SUCH_MAILBOX = /^550 5\.1\.1 No such mailbox$/;
const TRY_LATER = /^451 4\.3\.0 Local error in processing, try again later$/;

/** The trace lines every message of these scripts gets (the fixture's FakeClock starts 2026-01-01). */
const TRACE: ExpectedTrace = {
  envelopeFrom: 'sender@example.org',
  helo: 'client.example.org',
  client: '[127.0.0.1]',
  server: 'mx.tempinbox.test',
  protocol: 'ESMTP',
  date: 'Thu, 01 Jan 2026 00:00:00 +0000',
};

/** A message body as sent after DATA: CRLF lines, ended by the lone dot. */
function dataLines(lines: string[]): string {
  return `${lines.join('\r\n')}\r\n.`;
}

describe('greeting and EHLO', () => {
  it('greets with 220 and advertises exactly the inbound-MX extensions', async () => {
    const [greeting, ehlo] = await playSession(mx.port, [EHLO, { send: 'QUIT', expect: 221 }]);
    expect(greeting?.lines).toEqual(['220 mx.tempinbox.test ESMTP tempinbox inbound MX']);
    const features = (ehlo?.lines ?? []).slice(1).map((line) => line.slice(4));
    expect(features).toEqual(expect.arrayContaining([`SIZE ${TEST_MAX_MESSAGE_BYTES}`, '8BITMIME', 'SMTPUTF8', 'PIPELINING']));
    expect(features.some((f) => /^(AUTH|STARTTLS)\b/.test(f))).toBe(false);
    // No PTR lookup on the connection path: smtp-server names the client by its bare IP
    // literal instead of the PTR name a lookup would find (here 127.0.0.1 has one).
    expect(ehlo?.lines[0]).toMatch(/\[127\.0\.0\.1\]$/);
  });

  it('refuses AUTH and STARTTLS (no certificate configured) with 5xx', async () => {
    await playSession(mx.port, [
      EHLO,
      { send: 'AUTH PLAIN AHVzZXIAcGFzcw==', expect: /^5\d\d 5\.\d+\.\d+ / },
      { send: 'STARTTLS', expect: /^5\d\d / },
      MAIL,
    ]);
  });

  it('answers pipelined MAIL, RCPT and DATA in order', async () => {
    const inbox = await mx.inbox('pipeline');
    await playSession(mx.port, [
      EHLO,
      {
        send: `MAIL FROM:<a@example.org>\r\nRCPT TO:<${inbox.username}@tempinbox.test>\r\nRCPT TO:<nobody@tempinbox.test>\r\nDATA`,
        expect: [250, 250, 550, 354],
      },
      { send: dataLines(['Subject: pipelined', '', 'hi']), expect: /^250 / },
    ]);
    expect(await mx.messagesOf(inbox)).toHaveLength(1);
  });
});

describe('RCPT TO is decided per recipient', () => {
  it('denies relaying to a domain not served: 550 5.7.1', async () => {
    await playSession(mx.port, [EHLO, MAIL, { send: 'RCPT TO:<someone@gmail.com>', expect: /^550 5\.7\.1 Relay access denied$/ }]);
  });

  it('rejects an unknown user: 550 5.1.1', async () => {
    await playSession(mx.port, [EHLO, MAIL, { send: 'RCPT TO:<nobody@tempinbox.test>', expect: NO_SUCH_MAILBOX }]);
  });

  it('rejects an expired inbox like an unknown one: 550 5.1.1', async () => {
    await mx.inbox('gone', { ttlSeconds: -1 });
    await playSession(mx.port, [EHLO, MAIL, { send: 'RCPT TO:<gone@tempinbox.test>', expect: NO_SUCH_MAILBOX }]);
  });

  it('rejects the right name on another served domain: 550 5.1.1', async () => {
    await mx.inbox('alice');
    await playSession(mx.port, [EHLO, MAIL, { send: 'RCPT TO:<alice@other-served.test>', expect: NO_SUCH_MAILBOX }]);
  });

  it('rejects a path that is not a mailbox: 501 5.1.3', async () => {
    await playSession(mx.port, [
      EHLO,
      MAIL,
      // smtp-server's own syntax check…
      { send: 'RCPT TO:<no-at-sign>', expect: /^501 5\.1\.3 / },
      // …and ours (an address literal passes smtp-server but is no inbox address).
      { send: 'RCPT TO:<a@[127.0.0.1]>', expect: /^501 5\.1\.3 Bad destination mailbox address syntax$/ },
    ]);
  });

  it('accepts plus-addressing, any case, and postmaster@ of every served domain: 250', async () => {
    await mx.inbox('alice');
    await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<alice+newsletter@tempinbox.test>', expect: ACCEPTED },
      { send: 'RCPT TO:<ALICE@TempInbox.TEST>', expect: ACCEPTED },
      { send: 'RCPT TO:<postmaster@tempinbox.test>', expect: ACCEPTED },
      { send: 'RCPT TO:<PostMaster@other-served.test>', expect: ACCEPTED },
    ]);
  });

  it('answers a full free inbox 452 4.2.2 while a premium one with as many messages accepts', async () => {
    const free = await mx.inbox('fullfree');
    const premium = await mx.inbox('roomypremium', { licenseId: 'license-1' });
    await mx.fill(free, 2);
    await mx.fill(premium, 2);
    await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<fullfree@tempinbox.test>', expect: /^452 4\.2\.2 Mailbox full$/ },
      { send: 'RCPT TO:<roomypremium@tempinbox.test>', expect: ACCEPTED },
    ]);
  });

  it('takes 50 recipients, answers the 51st 452 4.5.3, and delivers to the 50', async () => {
    const inbox = await mx.inbox('many');
    const fifty: ScriptStep[] = Array.from({ length: 50 }, (_, i) => ({ send: `RCPT TO:<many+t${i}@tempinbox.test>`, expect: ACCEPTED }));
    await playSession(mx.port, [
      EHLO,
      MAIL,
      ...fifty,
      // Repeating an accepted address is not a new recipient.
      { send: 'RCPT TO:<many+t0@tempinbox.test>', expect: ACCEPTED },
      { send: 'RCPT TO:<many+t50@tempinbox.test>', expect: /^452 4\.5\.3 Too many recipients$/ },
      { send: 'DATA', expect: 354 },
      { send: dataLines(['Subject: fan-out', '', 'one copy per inbox']), expect: /^250 / },
    ]);
    expect(await mx.messagesOf(inbox)).toHaveLength(1);
  });
});

describe('message size', () => {
  it('refuses MAIL FROM with SIZE= over the limit: 552 5.3.4, and takes SIZE= at the limit', async () => {
    await playSession(mx.port, [
      EHLO,
      {
        send: `MAIL FROM:<a@example.org> SIZE=${TEST_MAX_MESSAGE_BYTES + 1}`,
        expect: new RegExp(`^552 5\\.3\\.4 Error: message exceeds fixed maximum message size ${TEST_MAX_MESSAGE_BYTES}$`),
      },
      { send: `MAIL FROM:<a@example.org> SIZE=${TEST_MAX_MESSAGE_BYTES}`, expect: 250 },
    ]);
  });

  it('refuses a message that turns out larger than the limit: 552 5.3.4, stays in sync, stores nothing', async () => {
    const inbox = await mx.inbox('big');
    const line = 'x'.repeat(76);
    const body = Array.from({ length: Math.ceil((TEST_MAX_MESSAGE_BYTES * 2) / 78) }, () => line);
    await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<big@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(['Subject: too big', '', ...body]), expect: /^552 5\.3\.4 Message size exceeds fixed maximum message size$/ },
      // The whole oversized message was drained: the next transaction works.
      MAIL,
      { send: 'RCPT TO:<big@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(['Subject: small', '', 'fits']), expect: /^250 / },
    ]);
    const messages = await mx.messagesOf(inbox);
    expect(messages.map((m) => m.subject)).toEqual(['small']);
  });

  it('accepts a message of exactly the limit', async () => {
    const inbox = await mx.inbox('exact');
    const head = 'Subject: exact\r\n\r\n';
    // The stored message is the DATA content with its final CRLF (RFC 5321 §4.1.1.4).
    const fill = 'y'.repeat(TEST_MAX_MESSAGE_BYTES - head.length - 2);
    await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<exact@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: `${head}${fill}\r\n.`, expect: /^250 / },
    ]);
    const [message] = await mx.messagesOf(inbox);
    // Stored: the trace lines, then exactly the limit's bytes; `size` counts what is stored.
    const raw = Buffer.from(await mx.rawOf(message?.id ?? ''), 'utf8');
    const { rest } = splitTrace(raw, TRACE);
    expect(rest.toString('utf8')).toBe(`${head}${fill}\r\n`);
    expect(rest.length).toBe(TEST_MAX_MESSAGE_BYTES);
    expect(message?.size).toBe(raw.length);
  });
});

describe('DATA', () => {
  it('answers 250 once the message is stored, with the bytes as sent (dot-unstuffed)', async () => {
    const inbox = await mx.inbox('alice');
    const lines = ['From: Sender <sender@example.org>', 'To: alice@tempinbox.test', 'Subject: Hello there', '', 'First line', '..starts with a dot', 'Last line'];
    const [, , , , , done] = await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<Alice+tag@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(lines), expect: /^250 2\.6\.0 / },
    ]);
    expect(done?.code).toBe(250);
    const [message] = await mx.messagesOf(inbox);
    expect(message?.subject).toBe('Hello there');
    expect(message?.from).toBe('Sender <sender@example.org>');
    expect(message?.text).toContain('.starts with a dot');
    const expectedRaw = `${lines.join('\r\n').replace('\r\n..starts', '\r\n.starts')}\r\n`;
    expect(splitTrace(await mx.rawOf(message?.id ?? ''), TRACE).rest.toString('utf8')).toBe(expectedRaw);
  });

  it('prepends Return-Path and Received (RFC 5321 §4.4): one id per transaction, HELO as SMTP, <> as sender', async () => {
    const alice = await mx.inbox('alice');
    const bob = await mx.inbox('bob', { domain: 'other-served.test' });
    const first = ['Subject: first', '', 'one'];
    const second = ['Subject: second', 'Received: from elsewhere by upstream; Wed, 31 Dec 2025 23:00:00 +0000', '', 'two'];
    await playSession(mx.port, [
      { send: 'HELO Legacy.Client.Example', expect: 250 },
      { send: 'MAIL FROM:<>', expect: 250 },
      { send: 'RCPT TO:<alice@tempinbox.test>', expect: ACCEPTED },
      { send: 'RCPT TO:<bob@other-served.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(first), expect: /^250 / },
      { send: 'MAIL FROM:<sender@example.org>', expect: 250 },
      { send: 'RCPT TO:<alice@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(second), expect: /^250 / },
    ]);
    const legacy = { ...TRACE, envelopeFrom: '', helo: 'legacy.client.example', protocol: 'SMTP' as const };
    const [secondToAlice, firstToAlice] = await mx.messagesOf(alice);
    const [firstToBob] = await mx.messagesOf(bob);
    const a1 = splitTrace(await mx.rawOf(firstToAlice?.id ?? ''), legacy);
    const b1 = splitTrace(await mx.rawOf(firstToBob?.id ?? ''), legacy);
    const a2 = splitTrace(await mx.rawOf(secondToAlice?.id ?? ''), { ...legacy, envelopeFrom: 'sender@example.org' });
    expect(a1.rest.toString('utf8')).toBe(`${first.join('\r\n')}\r\n`);
    expect(a2.rest.toString('utf8')).toBe(`${second.join('\r\n')}\r\n`);
    // One transaction, one id (in every copy and in the log line); the next transaction has another.
    expect(b1.id).toBe(a1.id);
    expect(a2.id).not.toBe(a1.id);
    const logged = mx.logs.filter((line) => line.includes('"message accepted"')).map((line) => JSON.parse(line).traceId);
    expect(logged).toEqual([a1.id, a2.id]);
    // The parsed message is unchanged by the trace lines; its header list starts with them.
    expect(firstToAlice?.subject).toBe('first');
    expect(firstToAlice?.from).toBe('');
    const detail = await mx.store.findMessage(secondToAlice?.id ?? '');
    expect(detail?.subject).toBe('second');
    expect(detail?.headers.map((h) => h.name.toLowerCase()).slice(0, 3)).toEqual(['return-path', 'received', 'subject']);
  });

  it('delivers a message to two of our inboxes into each', async () => {
    const alice = await mx.inbox('alice');
    const bob = await mx.inbox('bob', { domain: 'other-served.test' });
    await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<alice@tempinbox.test>', expect: ACCEPTED },
      { send: 'RCPT TO:<bob@other-served.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(['Subject: to both', '', 'hello both']), expect: /^250 / },
    ]);
    const [toAlice] = await mx.messagesOf(alice);
    const [toBob] = await mx.messagesOf(bob);
    expect(toAlice?.subject).toBe('to both');
    expect(toBob?.subject).toBe('to both');
    expect(toAlice?.id).not.toBe(toBob?.id);
  });

  it('stores mail to postmaster@ in the postmaster inbox', async () => {
    await playSession(mx.port, [
      EHLO,
      { send: 'MAIL FROM:<>', expect: 250 },
      { send: 'RCPT TO:<postmaster@other-served.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(['Subject: abuse report', '', 'see attached']), expect: /^250 / },
    ]);
    const postmaster = await mx.store.findInboxByUsername('postmaster');
    expect(postmaster).not.toBeNull();
    expect(await countMessages(mx.store, postmaster?.id ?? '')).toBe(1);
  });

  it('accepts malformed MIME with 250 and keeps the raw bytes', async () => {
    const inbox = await mx.inbox('junk');
    const lines = [
      'Content-Type: multipart/mixed; boundary="never-closed"',
      'this header line has no colon',
      'Subject: =?UTF-8?B?broken-base64?=',
      '',
      '--never-closed',
      'Content-Type: text/html; charset=no-such-charset',
      'Content-Transfer-Encoding: base64',
      '',
      '!!!! not base64 ¿ñ€ <script>alert(1)</script>',
      '--wrong-boundary--',
    ];
    await playSession(mx.port, [
      EHLO,
      { send: 'MAIL FROM:<a@example.org> BODY=8BITMIME', expect: 250 },
      { send: 'RCPT TO:<junk@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(lines), expect: /^250 / },
    ]);
    const [message] = await mx.messagesOf(inbox);
    const { rest } = splitTrace(await mx.rawOf(message?.id ?? ''), { ...TRACE, envelopeFrom: 'a@example.org' });
    expect(rest.toString('utf8')).toBe(`${lines.join('\r\n')}\r\n`);
    expect(message?.html ?? '').not.toContain('<script');
  });

  it('logs one line per accepted message: counts and sizes, no content or local parts', async () => {
    await mx.inbox('secretname');
    await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<secretname@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      { send: dataLines(['Subject: confidential subject', '', 'confidential body']), expect: /^250 / },
    ]);
    const accepted = mx.logs.filter((line) => line.includes('"message accepted"'));
    expect(accepted).toHaveLength(1);
    expect(JSON.parse(accepted[0] ?? '{}')).toMatchObject({ recipients: 1, inboxes: 1, domains: ['tempinbox.test'] });
    for (const line of mx.logs) expect(line).not.toMatch(/secretname|confidential|sender@example/);
  });
});

describe('a client that hangs up mid-DATA', () => {
  it('stores nothing, logs it quietly and keeps serving', async () => {
    const inbox = await mx.inbox('alice');
    await playSession(mx.port, [
      EHLO,
      MAIL,
      { send: 'RCPT TO:<alice@tempinbox.test>', expect: ACCEPTED },
      { send: 'DATA', expect: 354 },
      // No reply expected: the script ends and the socket is destroyed before the final dot.
      { send: 'Subject: cut off\r\n\r\nhalf a bo', expect: [] },
    ]);
    for (let i = 0; i < 40 && !mx.logs.some((line) => line.includes('client left during DATA')); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(mx.logs.some((line) => line.includes('client left during DATA'))).toBe(true);
    await playSession(mx.port, [EHLO, MAIL, { send: 'RCPT TO:<alice@tempinbox.test>', expect: ACCEPTED }]);
    expect(await mx.messagesOf(inbox)).toHaveLength(0);
  });
});

describe('when the store fails', () => {
  /** A store whose backend dies at the moment of storing the message. */
  class DownAtInsert extends MemoryMailStore {
    override insertMessage(_message: NewMessage, _inboxIds: string[], _policy: StorePolicy): Promise<Map<string, InsertOutcome>> {
      return Promise.reject(new StoreUnavailableError('connect ECONNREFUSED 10.0.0.7:5432'));
    }
  }

  it('answers DATA 451 4.3.0 (the sender retries), without leaking the cause, and keeps the session', async () => {
    const broken = await startSmtpFixture({ store: new DownAtInsert() });
    try {
      await broken.inbox('alice');
      const transcript = await playSession(broken.port, [
        EHLO,
        MAIL,
        { send: 'RCPT TO:<alice@tempinbox.test>', expect: ACCEPTED },
        { send: 'DATA', expect: 354 },
        { send: dataLines(['Subject: lost?', '', 'retry me']), expect: TRY_LATER },
        { send: 'RSET', expect: 250 },
      ]);
      expect(transcript.map((r) => r.lines.join('\n')).join('\n')).not.toContain('ECONNREFUSED');
    } finally {
      await broken.close();
    }
  });

  it('answers RCPT 451 4.3.0 when the lookup fails', async () => {
    class DownAtLookup extends MemoryMailStore {
      // The RCPT lookup: the inbox and its usage in one read.
      override findInboxWithUsage(): Promise<never> {
        return Promise.reject(new StoreUnavailableError('pool exhausted'));
      }
    }
    const broken = await startSmtpFixture({ store: new DownAtLookup() });
    try {
      await playSession(broken.port, [EHLO, MAIL, { send: 'RCPT TO:<alice@tempinbox.test>', expect: TRY_LATER }]);
    } finally {
      await broken.close();
    }
  });
});
