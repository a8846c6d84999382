import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/domain/types.js';
import type { InsertOutcome, StorePolicy } from '../../src/ports/mail-store.js';
import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { toolAvailable } from '../helpers/external-tools.js';
import { startSmtpFixture } from '../helpers/smtp-fixture.js';
import { playSession } from '../helpers/smtp-script.js';

/** Real clients against the real listener: nodemailer in plain text and over STARTTLS. */

/** Bound on every client operation, far below the test timeout. */
const CLIENT_TIMEOUT_MS = 10_000;

function transportTo(port: number, tls: boolean) {
  return createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    name: 'client.example.org',
    ...(tls ? { requireTLS: true, tls: { rejectUnauthorized: false } } : { ignoreTLS: true }),
    connectionTimeout: CLIENT_TIMEOUT_MS,
    greetingTimeout: CLIENT_TIMEOUT_MS,
    socketTimeout: CLIENT_TIMEOUT_MS,
  });
}

describe('nodemailer end to end', () => {
  it('sends a multipart message with an attachment that is stored and parsed', async () => {
    const mx = await startSmtpFixture();
    try {
      const inbox = await mx.inbox('alice');
      const info = (await transportTo(mx.port, false).sendMail({
        from: '"Sender Name" <sender@example.org>',
        to: 'alice+shop@tempinbox.test',
        subject: 'Your order ✓',
        text: 'Plain text body',
        html: '<p>HTML <b>body</b></p>',
        attachments: [{ filename: 'receipt.txt', content: 'receipt contents' }],
      })) as { accepted: string[]; rejected: string[]; response: string };
      expect(info.accepted).toEqual(['alice+shop@tempinbox.test']);
      expect(info.response).toMatch(/^250 2\.6\.0 /);
      const [message] = await mx.messagesOf(inbox);
      expect(message).toMatchObject({ subject: 'Your order ✓', from: 'Sender Name <sender@example.org>' });
      expect(message?.text).toContain('Plain text body');
      expect(message?.attachments.map((a) => a.filename)).toEqual(['receipt.txt']);
    } finally {
      await mx.close();
    }
  });

  it('reports per-recipient refusals: one accepted, one relay denied', async () => {
    const mx = await startSmtpFixture();
    try {
      const inbox = await mx.inbox('bob');
      const info = (await transportTo(mx.port, false).sendMail({
        from: 'sender@example.org',
        to: ['bob@tempinbox.test', 'carol@elsewhere.example'],
        subject: 'partial',
        text: 'x',
      })) as { accepted: string[]; rejected: string[] };
      expect(info.accepted).toEqual(['bob@tempinbox.test']);
      expect(info.rejected).toEqual(['carol@elsewhere.example']);
      expect(await mx.messagesOf(inbox)).toHaveLength(1);
    } finally {
      await mx.close();
    }
  });
});

describe.skipIf(!toolAvailable('openssl', 'STARTTLS with a throwaway certificate'))('STARTTLS with a configured certificate', () => {
  let dir = '';
  let tls: { key: Buffer; cert: Buffer };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tempinbox-smtp-tls-'));
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', keyFile, '-out', certFile],
      { stdio: 'ignore', timeout: 30_000 },
    );
    tls = { key: readFileSync(keyFile), cert: readFileSync(certFile) };
  });
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('advertises STARTTLS (still no AUTH) and answers it 220', async () => {
    const mx = await startSmtpFixture({ tls });
    try {
      const [, ehlo] = await playSession(mx.port, [
        { send: 'EHLO client.example.org', expect: /^250-.*\n(250[- ].*\n)*250[- ]STARTTLS$/m },
        { send: 'STARTTLS', expect: 220 },
      ]);
      expect(ehlo?.lines.some((line) => line.includes('AUTH'))).toBe(false);
    } finally {
      await mx.close();
    }
  });

  it('delivers over STARTTLS with a client that requires TLS', async () => {
    const mx = await startSmtpFixture({ tls });
    try {
      const inbox = await mx.inbox('secure');
      const info = (await transportTo(mx.port, true).sendMail({
        from: 'sender@example.org',
        to: 'secure@tempinbox.test',
        subject: 'over tls',
        text: 'encrypted in transit',
      })) as { response: string };
      expect(info.response).toMatch(/^250 /);
      const messages = await mx.messagesOf(inbox);
      expect(messages.map((m) => m.subject)).toEqual(['over tls']);
      // The trace header says the message came over TLS (RFC 3848: ESMTPS).
      const raw = await mx.rawOf(messages[0]?.id ?? '');
      expect(raw.split('\r\n')[2]).toMatch(/^\tby mx\.tempinbox\.test with ESMTPS id [A-Za-z0-9_-]{22};$/);
    } finally {
      await mx.close();
    }
  });
});

describe('close()', () => {
  it('lets an in-flight DATA commit and answer 250 before it resolves, then refuses connections', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let insertStarted = (): void => undefined;
    const started = new Promise<void>((resolve) => {
      insertStarted = resolve;
    });
    /** A store whose commit waits until the test has started closing the listener. */
    class SlowStore extends MemoryMailStore {
      override async insertMessage(message: NewMessage, inboxIds: string[], policy: StorePolicy): Promise<Map<string, InsertOutcome>> {
        insertStarted();
        await gate;
        return super.insertMessage(message, inboxIds, policy);
      }
    }
    const mx = await startSmtpFixture({ store: new SlowStore() });
    const inbox = await mx.inbox('alice');
    const session = playSession(mx.port, [
      { send: 'EHLO client.example.org', expect: 250 },
      { send: 'MAIL FROM:<a@example.org>', expect: 250 },
      { send: 'RCPT TO:<alice@tempinbox.test>', expect: 250 },
      { send: 'DATA', expect: 354 },
      { send: 'Subject: in flight\r\n\r\nbody\r\n.', expect: /^250 / },
      // Once closing, smtp-server answers any further command 421 and hangs up.
      { send: 'QUIT', expect: /^(221|421) / },
    ]);
    await started;
    const closing = mx.close();
    release();
    await session;
    await closing;
    expect(await mx.messagesOf(inbox)).toHaveLength(1);
    await expect(
      new Promise((resolve, reject) => {
        const socket = connect({ port: mx.port, host: '127.0.0.1' }, () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', reject);
      }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
