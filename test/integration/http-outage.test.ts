import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/observability/logger.js';
import { StoreUnavailableError, type MailStore } from '../../src/ports/mail-store.js';
import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';

/**
 * A store whose backend can be "unplugged": every call fails with StoreUnavailableError
 * while `down` is true, as a real driver does when its database is unreachable.
 */
function unpluggableStore(): { store: MailStore; setDown: (down: boolean) => void } {
  const inner = new MemoryMailStore();
  let down = false;
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) => {
        if (down) return Promise.reject(new StoreUnavailableError('database unreachable'));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, setDown: (value) => (down = value) };
}

describe('database outage over HTTP', () => {
  let app: App | undefined;
  afterEach(async () => {
    await app?.stop();
  });

  it('answers 503 unavailable and a failing /readyz, then recovers by itself', async () => {
    const { store, setDown } = unpluggableStore();
    app = await createApp(loadConfig({ PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', RATE_LIMITS: 'off' }), {
      store,
      logger: createLogger('silent'),
    });
    await app.start();
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
});
