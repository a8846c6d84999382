import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/build-test-app.js';

const RAW_WITH_ATTACHMENT = [
  'From: Sender <sender@example.org>',
  'Subject: with attachment',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b"',
  '',
  '--b',
  'Content-Type: text/plain',
  '',
  'hello',
  '--b',
  'Content-Type: application/octet-stream',
  'Content-Disposition: attachment; filename="a.bin"',
  'Content-Transfer-Encoding: base64',
  '',
  'AAECAw==',
  '--b--',
  '',
].join('\r\n');

/** An id of the right shape that names nothing. */
const MISSING_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

describe('not-found answers that tell nothing', () => {
  it('the attachment route answers one and the same 404 for a missing message, a foreign one and a missing attachment', async () => {
    const { app, newInbox } = await buildTestApp();
    const owner = await newInbox();
    const stranger = await newInbox();
    const recipient = await app.delivery.acceptRecipient(owner.email, 0);
    const { messageIds } = await app.delivery.deliver('sender@example.org', [recipient], new TextEncoder().encode(RAW_WITH_ATTACHMENT));
    const messageId = messageIds[0] ?? '';
    const detail = await app.http.inject({ method: 'GET', url: `/api/messages/${messageId}`, headers: { cookie: owner.cookie } });
    const attachmentId = detail.json<{ attachments: Array<{ id: string }> }>().attachments[0]?.id ?? '';
    const get = (cookie: string, url: string) => app.http.inject({ method: 'GET', url, headers: { cookie } });

    // The owner downloads it: the ids are right.
    expect((await get(owner.cookie, `/api/messages/${messageId}/attachments/${attachmentId}`)).statusCode).toBe(200);

    const answers = [
      await get(owner.cookie, `/api/messages/${MISSING_ID}/attachments/${attachmentId}`),
      await get(stranger.cookie, `/api/messages/${messageId}/attachments/${attachmentId}`),
      await get(owner.cookie, `/api/messages/${messageId}/attachments/${MISSING_ID}`),
      await get(owner.cookie, `/api/messages/${messageId}/attachments/not-an-id`),
    ];
    for (const answer of answers) {
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toMatchObject({ success: false, error: { code: 'not_found' } });
    }
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
  });

  it('a path that only resembles a route is 404, not 405 (the . of /api/openapi.json is literal)', async () => {
    const { app } = await buildTestApp();
    for (const url of ['/api/openapiXjson', '/api/openapi-json']) {
      const answer = await app.http.inject({ method: 'GET', url });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.json().error.code).toBe('not_found');
      expect(answer.headers.allow).toBeUndefined();
    }
    // The real routes still get their 405 with Allow.
    const wrongMethod = await app.http.inject({ method: 'POST', url: '/api/openapi.json' });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toContain('GET');
    const wrongOnParam = await app.http.inject({ method: 'PUT', url: `/api/messages/${MISSING_ID}` });
    expect(wrongOnParam.statusCode).toBe(405);
    expect(wrongOnParam.headers.allow).toContain('DELETE');
  });
});
