import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { innocentMessage, sendBeside } from '../helpers/send-beside.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/** The red team's input: a URL followed by 300,000 dots and a letter, on one line. */
const DOTS = 300_000;

/**
 * Well under the parse deadline (10 s), which a quadratic scan of the dots passed: linear
 * text analysis answers this message in milliseconds.
 */
const MAX_HOSTILE_REPLY_MS = 5_000;

/** The dots, after a code and a link that only a full parse finds (the header-only fallback lists neither). */
function dotsMessage(to: string, subject: string): string {
  return [
    'From: Red Team <red@attacker.test>',
    `To: ${to}`,
    `Subject: ${subject}`,
    'Content-Type: text/plain',
    '',
    'Your code is 731904. Details: https://b.test/ok.',
    `See http://a.test/${'.'.repeat(DOTS)}x`,
    '',
  ].join('\r\n');
}

interface Listed {
  id: string;
  subject: string;
  codes: string[];
  links: { url: string; text: string }[];
  attachments: { filename: string }[];
}

/**
 * The text-analysis attack end to end, against the built program over real SMTP: a message
 * whose link scan was quadratic, and an innocent message sent a few ms behind it. Both are
 * parsed whole: the hostile one with its link, the innocent one with its code and attachment.
 */
describe('a message built to make text analysis slow, with an innocent one beside it', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  let owner: CookieClient;
  let inbox: { email: string; username: string };

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' });
    owner = new CookieClient(server.baseUrl);
    inbox = (await owner.get('/api/create')).json;
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  it.each([5, 25, 50])('%i ms apart: both are parsed whole, the hostile one in time', async (gapMs) => {
    const { hostile, innocent } = await sendBeside(
      server.smtpPort,
      { from: 'sender@example.org', to: inbox.email },
      { hostile: dotsMessage(inbox.email, `dots ${gapMs}`), innocent: innocentMessage(inbox.email, `innocent ${gapMs}`), gapMs },
    );
    expect(hostile.reply).toMatch(/^250 /);
    expect(innocent.reply).toMatch(/^250 /);

    const emails = (await owner.get(`/api/check/${inbox.username}`)).json.emails as Listed[];
    const sent = emails.find((message) => message.subject === `innocent ${gapMs}`);
    expect(sent?.attachments.map((attachment) => attachment.filename)).toEqual(['invoice.pdf']);
    expect(sent?.codes).toEqual(['482913']);
    expect(hostile.answeredAfterMs).toBeLessThan(MAX_HOSTILE_REPLY_MS);
    const dots = emails.find((message) => message.subject === `dots ${gapMs}`);
    expect(dots?.codes).toEqual(['731904']);
    // The dotted URL is longer than any link kept (skipped, never cut).
    expect(dots?.links).toEqual([{ url: 'https://b.test/ok', text: '' }]);
  }, 60_000);
});
