import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';

/** Whether a TCP connection to the port on loopback is refused (nothing listens there any more). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/**
 * The helper every in-process test builds its app with: the app it gives is started on free
 * ports, and the teardown stops it and removes its SQLite file even when the test fails. Two
 * tests look at what the test before them left behind, so they run in order.
 */
describe('buildTestApp', () => {
  it('lists a delivered message (the example of docs/development.md, on the default memory store)', async () => {
    const { app, newInbox } = await buildTestApp();
    const { cookie, email } = await newInbox();
    const recipient = await app.delivery.acceptRecipient(email, 0);
    await app.delivery.deliver('sender@example.org', [recipient], Buffer.from('Subject: hi\r\n\r\nhello\r\n'));
    const check = await app.http.inject({ method: 'GET', url: `/api/check/${email}`, headers: { cookie } });
    expect(check.json().emails).toHaveLength(1);
  });

  let left: TestApp | undefined;

  it('gives a started app on a SQLite file, with a session of its own', async () => {
    left = await buildTestApp({ store: 'sqlite' });
    const { app, httpPort, smtpPort, databaseFile, newInbox, sqlite } = left;
    expect(httpPort).toBeGreaterThan(0);
    expect(smtpPort).toBeGreaterThan(0);
    expect(databaseFile !== undefined && existsSync(databaseFile)).toBe(true);
    const { cookie, email, username } = await newInbox();
    expect(email).toBe(`${username}@tempinbox.test`);
    const session = await app.http.inject({ method: 'GET', url: '/api/session', headers: { cookie } });
    expect(session.statusCode).toBe(200);
    expect((sqlite().prepare('SELECT count(*) AS n FROM inboxes').get() as { n: number }).n).toBe(1);
    expect(await refused(httpPort)).toBe(false);
  });

  it('has stopped that app and removed its file when the test ended', async () => {
    expect(left).toBeDefined();
    expect(await refused(left?.httpPort ?? 0)).toBe(true);
    expect(await refused(left?.smtpPort ?? 0)).toBe(true);
    expect(existsSync(left?.databaseFile ?? '')).toBe(false);
    left = undefined;
  });

  it.fails('stops the app of a test that fails', async () => {
    left = await buildTestApp({ store: 'sqlite' });
    throw new Error('this test fails on purpose');
  });

  it('has stopped the failed test\'s app too', async () => {
    expect(left).toBeDefined();
    expect(await refused(left?.httpPort ?? 0)).toBe(true);
    expect(existsSync(left?.databaseFile ?? '')).toBe(false);
  });
});
