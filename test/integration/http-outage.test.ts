import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { StoreFailureError, StoreFullError, StoreUnavailableError, type MailStore } from '../../src/ports/mail-store.js';
import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { buildTestApp } from '../helpers/build-test-app.js';

/**
 * A store whose backend can be "unplugged": every call fails with StoreUnavailableError
 * while `down` is true, as a real driver does when its database is unreachable.
 */
function unpluggableStore(failure: () => Error = () => new StoreUnavailableError('database unreachable')): {
  store: MailStore;
  setDown: (down: boolean) => void;
} {
  const inner = new MemoryMailStore();
  let down = false;
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) => {
        if (down) return Promise.reject(failure());
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, setDown: (value) => (down = value) };
}

describe('database outage over HTTP', () => {
  it('answers 503 unavailable and a failing /readyz, then recovers by itself', async () => {
    const { store, setDown } = unpluggableStore();
    const { app } = await buildTestApp({ store });
    const created = await app.http.inject({ method: 'GET', url: '/api/create' });
    expect(created.statusCode).toBe(200);
    const cookie = created.headers['set-cookie'];
    const username = created.json().username as string;

    setDown(true);
    const check = await app.http.inject({ method: 'GET', url: `/api/check/${username}`, headers: { cookie: String(cookie).split(';')[0] } });
    expect(check.statusCode).toBe(503);
    expect(check.json()).toMatchObject({ success: false, error: { code: 'unavailable' } });
    expect(check.body).not.toContain('database unreachable');
    const ready = await app.http.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().error.code).toBe('unavailable');
    expect((await app.http.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    setDown(false);
    expect((await app.http.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const again = await app.http.inject({ method: 'GET', url: `/api/check/${username}`, headers: { cookie: String(cookie).split(';')[0] } });
    expect(again.statusCode).toBe(200);
  });

  it('answers a failing query with 500 internal_error logged at error with its cause, and a full disk with 507 storage_full', async () => {
    let failure: Error = new StoreFailureError('findSession failed: no such table: sessions', { cause: new Error('SQLITE_ERROR: no such table: sessions') });
    const { store, setDown } = unpluggableStore(() => failure);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter((line) => line.length > 0));
        done();
      },
    });
    const { app } = await buildTestApp({ store, overrides: { logger: createLogger('info', sink) } });
    const created = await app.http.inject({ method: 'GET', url: '/api/create' });
    const cookie = String(created.headers['set-cookie']).split(';')[0] ?? '';

    setDown(true);
    const bug = await app.http.inject({ method: 'GET', url: '/api/session', headers: { cookie } });
    expect(bug.statusCode).toBe(500);
    expect(bug.json()).toMatchObject({ success: false, error: { code: 'internal_error' } });
    expect(bug.body).not.toContain('no such table');
    const logged = lines.map((line) => JSON.parse(line) as { level: number; err?: { message?: string } }).find((entry) => entry.level === 50);
    // pino level 50 = error; the cause's text is in the logged error.
    expect(logged?.err?.message).toContain('no such table');

    failure = new StoreFullError('insertSession failed: database or disk is full');
    const full = await app.http.inject({ method: 'GET', url: '/api/create' });
    expect(full.statusCode).toBe(507);
    expect(full.json()).toMatchObject({ success: false, error: { code: 'storage_full' } });
    setDown(false);
  });
});
