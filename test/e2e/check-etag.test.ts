import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient, type ClientResponse } from '../helpers/cookie-client.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/**
 * The check's ETag against the started program (docs/api.md, check: "ETag"): the same answer
 * keeps its tag and is answered 304 without a body; every change of the answer changes it.
 */
describe('check ETag end to end', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  const env = { DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' };

  beforeAll(async () => {
    server = await startServer(env);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  /** A check with If-None-Match `tag`: 304 with no body, or 200 with a new tag. */
  async function conditional(client: CookieClient, path: string, tag: string): Promise<ClientResponse> {
    return client.get(path, { 'if-none-match': tag });
  }

  async function send(to: string, subject: string): Promise<void> {
    expect(await sendWithNodemailer(server.smtpPort, { to, subject, text: `${subject} body` })).toMatch(/^250 /);
  }

  it('answers 304 while nothing changed, and a new tag with each arrival and deletion', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    const path = `/api/check/${inbox.username}`;

    const empty = await client.get(path);
    expect(empty.status).toBe(200);
    const emptyTag = empty.headers.get('etag') ?? '';
    expect(emptyTag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const same = await conditional(client, path, emptyTag);
    expect(same.status).toBe(304);
    expect(same.text).toBe('');
    expect(same.headers.get('etag')).toBe(emptyTag);
    // A weak form of the tag, and a list holding it, match too (RFC 9110 weak comparison on GET).
    expect((await conditional(client, path, `W/${emptyTag}`)).status).toBe(304);
    expect((await conditional(client, path, `"other", ${emptyTag}`)).status).toBe(304);
    expect((await conditional(client, path, '"other"')).status).toBe(200);

    await send(inbox.email, 'first');
    const one = await conditional(client, path, emptyTag);
    expect(one.status).toBe(200);
    expect(one.json.count).toBe(1);
    const oneTag = one.headers.get('etag') ?? '';
    expect(oneTag).not.toBe(emptyTag);
    expect((await conditional(client, path, oneTag)).status).toBe(304);

    await send(inbox.email, 'second');
    const two = await conditional(client, path, oneTag);
    expect(two.status).toBe(200);
    expect(two.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['second', 'first']);
    const twoTag = two.headers.get('etag') ?? '';

    // Delete the older one, receive a third: two messages again, another answer, another tag.
    expect((await client.delete(`/api/messages/${two.json.emails[1].id}`)).status).toBe(200);
    const deleted = await conditional(client, path, twoTag);
    expect(deleted.status).toBe(200);
    expect(deleted.json.count).toBe(1);
    const deletedTag = deleted.headers.get('etag') ?? '';
    await send(inbox.email, 'third');
    const three = await conditional(client, path, deletedTag);
    expect(three.status).toBe(200);
    expect(three.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['third', 'second']);
    const threeTag = three.headers.get('etag') ?? '';
    expect(new Set([emptyTag, oneTag, twoTag, deletedTag, threeTag]).size).toBe(5);
    expect((await conditional(client, path, twoTag)).status).toBe(200);
    expect((await conditional(client, path, threeTag)).status).toBe(304);
  });

  it('gives each query its own tag, `since` the newest its 304 too, and no tag to a held check', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    await send(inbox.email, 'code 1');
    await send(inbox.email, 'news');
    const path = `/api/check/${inbox.username}`;
    const all = await client.get(path);
    const newest = all.json.emails[0].id;
    const tags = new Set<string>();
    for (const query of ['', '?limit=1', `?since=${newest}`, `?before=${newest}`, '?subject=code', '?from=nobody']) {
      const answer = await client.get(`${path}${query}`);
      expect(answer.status, query).toBe(200);
      const tag = answer.headers.get('etag') ?? '';
      tags.add(tag);
      expect((await conditional(client, `${path}${query}`, tag)).status, query).toBe(304);
    }
    expect(tags.size).toBe(6);
    // The since poll that finds nothing: count 0, then 304 until a message arrives.
    const since = await client.get(`${path}?since=${newest}`);
    expect(since.json).toEqual({ success: true, count: 0, emails: [], has_more: false });
    const sinceTag = since.headers.get('etag') ?? '';
    await send(inbox.email, 'later');
    const later = await conditional(client, `${path}?since=${newest}`, sinceTag);
    expect(later.status).toBe(200);
    expect(later.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['later']);

    const held = await client.get(`${path}?wait=1`, { 'if-none-match': later.headers.get('etag') ?? '' });
    expect(held.status).toBe(200);
    expect(held.headers.get('etag')).toBeNull();
  });

  it('keeps the tag when premium changes the inbox expiry (not part of the answer); a discarded inbox is 404, not 304', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    await send(inbox.email, 'kept');
    const path = `/api/check/${inbox.username}`;
    const before = await client.get(path);
    const tag = before.headers.get('etag') ?? '';
    const minted = await runBin(['license', 'create'], env);
    expect(minted.code).toBe(0);
    const redeemed = await client.postJson('/api/premium/redeem', { key: minted.stdout.trim() });
    expect(redeemed.status).toBe(200);
    const session = await client.get('/api/session');
    expect(session.json.inboxes[0].ttl).toBe(2_592_000);
    // The answer does not show the expiry: the same body, so the same tag.
    const after = await conditional(client, path, tag);
    expect(after.status).toBe(304);
    expect((await client.get(path)).text).toBe(before.text);

    expect((await client.delete(`/api/inbox/${inbox.username}`)).status).toBe(200);
    expect((await conditional(client, path, tag)).status).toBe(404);
  });
});
