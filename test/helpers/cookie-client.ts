/** One HTTP answer with its JSON body parsed when it is JSON. */
export interface ClientResponse {
  status: number;
  headers: Headers;
  text: string;
  // Tests read arbitrary fields of API bodies.
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
}

/**
 * A minimal cookie-keeping HTTP client over fetch, like a real API client that stores and
 * replays cookies: it keeps what Set-Cookie sets and sends it back on every request.
 */
export class CookieClient {
  private readonly jar = new Map<string, string>();

  constructor(private readonly baseUrl: string) {}

  /** The stored value of a cookie. */
  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  /** Replaces the stored cookie (or removes it with undefined). */
  setCookie(name: string, value: string | undefined): void {
    if (value === undefined) this.jar.delete(name);
    else this.jar.set(name, value);
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<ClientResponse> {
    return this.request('GET', path, undefined, headers);
  }

  async delete(path: string): Promise<ClientResponse> {
    return this.request('DELETE', path);
  }

  async postJson(path: string, body: unknown): Promise<ClientResponse> {
    return this.request('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  }

  async request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<ClientResponse> {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      body,
      headers: { ...(cookie ? { cookie } : {}), ...headers },
      signal: AbortSignal.timeout(10_000),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const text = await response.text();
    let json: unknown = undefined;
    if ((response.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(text);
    return { status: response.status, headers: response.headers, text, json };
  }
}

/** A listed message, as far as the paging helper needs it. */
interface ListedMessage {
  id: string;
  subject: string;
}

/**
 * Every message of an inbox, newest first, through GET /api/check pages: follows `has_more`
 * with `before=<last id>` (an answer holds at most 100 messages). Throws on any non-200 page.
 */
export async function checkAll(client: CookieClient, username: string): Promise<ListedMessage[]> {
  const all: ListedMessage[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await client.get(`/api/check/${username}${before === undefined ? '' : `?before=${before}`}`);
    if (page.status !== 200) throw new Error(`check answered ${page.status}: ${page.text.slice(0, 200)}`);
    const emails = page.json.emails as ListedMessage[];
    all.push(...emails);
    before = emails.at(-1)?.id;
    if (page.json.has_more !== true || before === undefined) return all;
  }
}
