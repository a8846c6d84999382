import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { exactAttachments } from '../helpers/exact-mime-parts.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/**
 * Attachments keep their exact bytes, end to end: each fixture of test/fixtures/eml/exact-bytes
 * is sent over real SMTP (as its bytes are, bare LFs included) to the started program, and
 * every attachment downloaded over HTTP is byte-identical to the decoded MIME part as an
 * independent reading of the fixture (test/helpers/exact-mime-parts.ts) gives it.
 */

const FIXTURES = new URL('../fixtures/eml/exact-bytes/', import.meta.url);
const names = readdirSync(FIXTURES).filter((name) => name.endsWith('.eml')).sort();

function digest(bytes: Uint8Array): { size: number; sha256: string } {
  return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
}

describe('attachments download byte-identical to their MIME part', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  let owner: CookieClient;
  let inbox: { email: string; username: string };
  const ids = new Map<string, string>();

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' });
    owner = new CookieClient(server.baseUrl);
    inbox = (await owner.get('/api/create')).json;
    for (const name of names) {
      const before = new Set(ids.values());
      const reply = await sendRawSmtp(server.smtpPort, 'sender@example.org', inbox.email, readFileSync(new URL(name, FIXTURES)));
      expect(reply, name).toMatch(/^250 /);
      const check = await owner.get(`/api/check/${inbox.username}`);
      const fresh = check.json.emails.find((m: { id: string }) => !before.has(m.id));
      expect(fresh, `${name} is listed`).toBeDefined();
      ids.set(name, fresh.id);
    }
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  it.each(names)('%s', async (name) => {
    const expected = exactAttachments(readFileSync(new URL(name, FIXTURES)));
    const detail = await owner.get(`/api/messages/${ids.get(name)}`);
    expect(detail.status).toBe(200);
    const downloads: Uint8Array[] = [];
    for (const attachment of detail.json.attachments as { id: string; size: number }[]) {
      const response = await fetch(`${server.baseUrl}/api/messages/${ids.get(name)}/attachments/${attachment.id}`, {
        headers: { cookie: `tempinbox_session=${owner.cookie('tempinbox_session')}` },
      });
      expect(response.status).toBe(200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(bytes.byteLength, 'listed size = downloaded size').toBe(attachment.size);
      downloads.push(bytes);
    }
    expect(downloads.map((bytes) => bytes.byteLength), 'attachment sizes').toEqual(expected.map((part) => part.bytes.byteLength));
    expect(downloads.map(digest)).toEqual(expected.map((part) => digest(part.bytes)));
  });

  it('shows a body typed `text` without subtype as the text, not as a .bin attachment', async () => {
    const detail = await owner.get(`/api/messages/${ids.get('content-type-text-no-subtype.eml')}`);
    expect(detail.json.body).toContain('Your verification code is 482913.');
    expect(detail.json.attachments).toEqual([]);
  });
});
