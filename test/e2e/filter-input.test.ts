import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

const postgres = await postgresAvailable('check filters');

/** Sends one message with these headers over real SMTP; resolves with the reply to DATA. */
function send(server: ServerProcess, to: string, headers: string): Promise<string> {
  return sendRawSmtp(server.smtpPort, 'bounce@sender.example', to, new TextEncoder().encode(`${headers}\r\nTo: ${to}\r\n\r\nbody\r\n`));
}

/** The subjects a check with this query answers, newest first (the status when it is not 200). */
async function subjects(client: CookieClient, path: string): Promise<string[] | number> {
  const answer = await client.get(path);
  return answer.status === 200 ? (answer.json.emails as { subject: string }[]).map((m) => m.subject) : answer.status;
}

/**
 * The filters of a check as a client meets them (docs/api.md, check: "Filters"), on the started
 * program over real SMTP, on each database: the same Unicode case folding on SQLite as on
 * PostgreSQL, and a control character is refused rather than matched.
 */
function describeFilters(name: string, makeEnv: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>): void {
  describe(`check filters on ${name}`, () => {
    let server: ServerProcess;
    let cleanup = async () => undefined as void;
    let client: CookieClient;
    let inbox: { username: string; email: string };

    beforeAll(async () => {
      const made = await makeEnv();
      cleanup = made.cleanup;
      server = await startServer(made.env, 30_000);
      client = new CookieClient(server.baseUrl);
      inbox = (await client.get('/api/create')).json;
      const [local, domain] = inbox.email.split('@');
      const mails = [
        `From: =?utf-8?q?=C3=89lise?= <elise@example.org>\r\nSubject: =?utf-8?q?=C3=89LAN_vital?=`,
        'From: Hans <hans@example.de>\r\nSubject: =?utf-8?q?Stra=C3=9Fe_5?=',
        'From: Nikos <nikos@example.gr>\r\nSubject: =?utf-8?b?zp/OlM6fzqM=?=',
        'From: Ayla <ayla@example.tr>\r\nSubject: =?utf-8?q?I=C5=9EIK?=',
        'From: plain <plain@example.org>\r\nSubject: plain',
      ];
      for (const headers of mails) expect(await send(server, `${local}+STRASSE@${domain}`, headers)).toMatch(/^250/);
    }, 60_000);
    afterAll(async () => {
      expect(await server?.stop()).toBe(0);
      await cleanup();
    });

    it('folds case by Unicode, the same on both databases', async () => {
      const path = `/api/check/${inbox.username}`;
      expect(await subjects(client, `${path}?subject=${encodeURIComponent('élan')}`)).toEqual(['ÉLAN vital']);
      expect(await subjects(client, `${path}?from=${encodeURIComponent('ÉLISE')}`)).toEqual(['ÉLAN vital']);
      // ß is ss, as in Unicode's full case folding.
      expect(await subjects(client, `${path}?subject=STRASSE`)).toEqual(['Straße 5']);
      // Every sigma is one letter: the final ς of ΟΔΟΣ matches σ.
      expect(await subjects(client, `${path}?subject=${encodeURIComponent('οδοσ')}`)).toEqual(['ΟΔΟΣ']);
      // The dotless ı of a Turkish keyboard finds the capital I.
      expect(await subjects(client, `${path}?subject=${encodeURIComponent('ışık')}`)).toEqual(['IŞIK']);
      // The recipient is folded too: +STRASSE was stored lowercase, found as straße.
      expect(await subjects(client, `${path}?to=${encodeURIComponent('+straße@')}&subject=plain`)).toEqual(['plain']);
    });

    it('refuses a filter with a control character, with or without wait, and matches C1 characters as text', async () => {
      const path = `/api/check/${inbox.username}`;
      for (const query of ['from=%00', 'subject=a%00', 'to=%0A', 'subject=%09plain', 'from=%7F', 'subject=%1F', 'from=%00&wait=5', 'to=%00&limit=1&wait=1']) {
        const answer = await client.get(`${path}?${query}`);
        expect(answer.status, query).toBe(400);
        expect(answer.json.error.code, query).toBe('invalid_request');
      }
      // U+0085 (NEL) is not one of them: an ordinary filter that matches nothing here.
      expect(await subjects(client, `${path}?subject=%C2%85`)).toEqual([]);
    });
  });
}

describeFilters('SQLite', async () => {
  const data = tempDataDir();
  return { env: { DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' }, cleanup: async () => data.cleanup() };
});

describe.skipIf(!postgres)('PostgreSQL', () => {
  let database: TestDatabase | undefined;
  describeFilters('PostgreSQL', async () => {
    database = await createTestDatabase();
    const made = database;
    return { env: { DATABASE_URL: made.url, RATE_LIMITS: 'off' }, cleanup: () => made.drop() };
  });
});
