/** A session with its inbox, as /api/create returned them. */
export interface BenchInbox {
  cookie: string;
  username: string;
  email: string;
}

/** Message ids of an /api/check answer, newest first, and the body size. */
export interface CheckResult {
  ids: string[];
  bytes: number;
}

/** Creates a session and its free inbox over the public API. */
export async function createInbox(baseUrl: string): Promise<BenchInbox> {
  const response = await fetch(`${baseUrl}/api/create`);
  if (!response.ok) throw new Error(`/api/create answered ${response.status}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const body = (await response.json()) as { username: string; email: string };
  return { cookie, username: body.username, email: body.email };
}

/** GET /api/check/<username>[?since=…] with the session's cookie. */
export async function checkInbox(baseUrl: string, inbox: BenchInbox, since?: string): Promise<CheckResult> {
  const query = since === undefined ? '' : `?since=${encodeURIComponent(since)}`;
  const response = await fetch(`${baseUrl}/api/check/${inbox.username}${query}`, { headers: { cookie: inbox.cookie } });
  const text = await response.text();
  if (!response.ok) throw new Error(`/api/check answered ${response.status}: ${text}`);
  const body = JSON.parse(text) as { emails: Array<{ id: string }> };
  return { ids: body.emails.map((email) => email.id), bytes: Buffer.byteLength(text) };
}

/** Body size of an answer (for the HTTP floor at equal body size). */
export async function bodyBytes(url: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, { headers });
  return Buffer.byteLength(await response.text());
}
