import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpFixture, type SmtpFixture } from '../helpers/smtp-fixture.js';
import { playSession, SmtpLineClient } from '../helpers/smtp-script.js';

/**
 * SMTP abuse limits (docs/api.md "SMTP abuse limits") over real sockets. Every 127.x.y.z is
 * this machine, so a test acts as many clients and networks by binding its client sockets
 * to different loopback source addresses.
 */

/** Longest wait for one reply or close: generous for a loaded CI machine. */
const STEP_MS = 5_000;
const REFUSED = /^550 5\.1\.1 /;
const CLOSING_POLICY = /^421 4\.7\.0 /;
const EVICTED = /^421 4\.4\.2 /;

let mx: SmtpFixture | undefined;
const clients: SmtpLineClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await mx?.close();
  mx = undefined;
});

/** Connects from `localAddress` and reads the greeting. */
async function connectFrom(port: number, localAddress: string): Promise<{ client: SmtpLineClient; greeting: string }> {
  const client = await SmtpLineClient.open(port, '127.0.0.1', STEP_MS, localAddress);
  clients.push(client);
  const greeting = await client.nextReply('(greeting)');
  return { client, greeting: greeting.lines.join('\n') };
}

/** Sends one command and returns the reply text. */
async function command(client: SmtpLineClient, line: string): Promise<string> {
  client.write(`${line}\r\n`);
  return (await client.nextReply(line)).lines.join('\n');
}

describe('refused recipients in one connection', () => {
  it('answers the 6th refused RCPT with 421 4.7.0 and closes the connection', async () => {
    mx = await startSmtpFixture();
    await mx.inbox('real');
    const { client } = await connectFrom(mx.port, '127.0.1.1');
    expect(await command(client, 'EHLO probe.example')).toMatch(/^250/);
    expect(await command(client, 'MAIL FROM:<probe@example.org>')).toMatch(/^250/);
    for (let i = 0; i < 4; i += 1) expect(await command(client, `RCPT TO:<guess${i}@tempinbox.test>`)).toMatch(REFUSED);
    // Relay attempts are refusals too; accepted recipients are not.
    expect(await command(client, 'RCPT TO:<someone@gmail.example>')).toMatch(/^550 5\.7\.1 /);
    expect(await command(client, 'RCPT TO:<real@tempinbox.test>')).toMatch(/^250 /);
    expect(await command(client, 'RCPT TO:<guess5@tempinbox.test>')).toMatch(CLOSING_POLICY);
    expect(await client.waitClosed(STEP_MS)).toBe(true);
  });

  it('ends a pipelined burst of probes after the 6th refusal', async () => {
    mx = await startSmtpFixture();
    const { client } = await connectFrom(mx.port, '127.0.1.2');
    expect(await command(client, 'EHLO probe.example')).toMatch(/^250/);
    const probes = Array.from({ length: 200 }, (_, i) => `RCPT TO:<name${i}@tempinbox.test>`);
    client.write(`MAIL FROM:<probe@example.org>\r\n${probes.join('\r\n')}\r\n`);
    const replies: string[] = [];
    // Bounded: at most one reply per line sent, each wait bounded by STEP_MS.
    for (let i = 0; i <= probes.length && !client.closed; i += 1) {
      try {
        replies.push((await client.nextReply('(burst)')).lines.join('\n'));
      } catch {
        break;
      }
    }
    expect(replies.slice(1, 6).every((reply) => REFUSED.test(reply))).toBe(true);
    expect(replies[6]).toMatch(CLOSING_POLICY);
    expect(replies).toHaveLength(7);
    expect(await client.waitClosed(STEP_MS)).toBe(true);
  });
});

describe('refused recipients per client network (fair use)', () => {
  it('once a /24 has spent its budget, its clients get 421 4.7.0 at connect; another /24 does not', async () => {
    mx = await startSmtpFixture({ refusedPerNetwork: 8 });
    // Six refusals on one connection (the 6th closes it)...
    await playSession(
      mx.port,
      [
        { send: 'EHLO a.example', expect: 250 },
        { send: 'MAIL FROM:<a@example.org>', expect: 250 },
        ...Array.from({ length: 5 }, (_, i) => ({ send: `RCPT TO:<a${i}@tempinbox.test>`, expect: REFUSED })),
        { send: 'RCPT TO:<a5@tempinbox.test>', expect: CLOSING_POLICY },
      ],
      { localAddress: '127.0.2.1' },
    );
    // ...and two more from another address of the same /24 spend the 8; the 9th is refused as policy.
    await playSession(
      mx.port,
      [
        { send: 'EHLO b.example', expect: 250 },
        { send: 'MAIL FROM:<b@example.org>', expect: 250 },
        { send: 'RCPT TO:<b0@tempinbox.test>', expect: REFUSED },
        { send: 'RCPT TO:<b1@tempinbox.test>', expect: REFUSED },
        { send: 'RCPT TO:<b2@tempinbox.test>', expect: CLOSING_POLICY },
      ],
      { localAddress: '127.0.2.2' },
    );
    const sameNetwork = await connectFrom(mx.port, '127.0.2.77');
    expect(sameNetwork.greeting).toMatch(CLOSING_POLICY);
    expect(await sameNetwork.client.waitClosed(STEP_MS)).toBe(true);

    const otherNetwork = await connectFrom(mx.port, '127.0.3.1');
    expect(otherNetwork.greeting).toMatch(/^220 /);
    expect(await command(otherNetwork.client, 'EHLO c.example')).toMatch(/^250/);
    expect(await command(otherNetwork.client, 'MAIL FROM:<c@example.org>')).toMatch(/^250/);
    expect(await command(otherNetwork.client, 'RCPT TO:<c0@tempinbox.test>')).toMatch(REFUSED);
  });
});

describe('connection slots kept for newcomers', () => {
  it('with all slots taken, a client from a new network gets 220 and the oldest idle connection of the biggest network 421 4.4.2', async () => {
    const maxClients = 40;
    mx = await startSmtpFixture({ limits: { maxClients } });
    const port = mx.port;
    // Three networks fill every slot: 20 + 12 + 8, the biggest one first (its first is the oldest).
    const layout: Array<[string, number]> = [
      ['127.0.10', 20],
      ['127.0.11', 12],
      ['127.0.12', 8],
    ];
    const held: Array<{ client: SmtpLineClient; network: string }> = [];
    for (const [network, count] of layout) {
      for (let host = 1; host <= count; host += 1) {
        const { client, greeting } = await connectFrom(port, `${network}.${host}`);
        expect(greeting).toMatch(/^220 /);
        held.push({ client, network });
      }
    }
    // Everything but the oldest has said something since: the oldest is the one idle longest.
    for (const { client } of held.slice(1)) expect(await command(client, 'NOOP')).toMatch(/^250/);

    const newcomer = await connectFrom(port, '127.0.99.1');
    expect(newcomer.greeting).toMatch(/^220 /);
    expect(await command(newcomer.client, 'EHLO newcomer.example')).toMatch(/^250/);

    const oldest = held[0]?.client;
    expect((await oldest?.nextReply('(eviction)'))?.lines.join('\n')).toMatch(EVICTED);
    expect(await oldest?.waitClosed(STEP_MS)).toBe(true);
    // Nobody else was closed: the other networks keep every slot.
    for (const { client } of held.slice(1)) expect(client.closed).toBe(false);
    for (const { client } of held.filter((h) => h.network !== '127.0.10')) expect(await command(client, 'NOOP')).toMatch(/^250/);
  });
});

describe('hard idle cap', () => {
  it('closes a connection that only sends NOOP with 421 4.4.2 once the cap is spent', async () => {
    const idleCapMs = 1_500;
    mx = await startSmtpFixture({ limits: { idleCapMs } });
    const { client } = await connectFrom(mx.port, '127.0.4.1');
    expect(await command(client, 'EHLO idle.example')).toMatch(/^250/);
    const started = Date.now();
    let reply = '';
    // Bounded in count and time: a NOOP every 100 ms for at most 10 s.
    for (let i = 0; i < 100 && Date.now() - started < 10_000; i += 1) {
      reply = await command(client, i % 3 === 0 ? 'RSET' : 'NOOP');
      if (!reply.startsWith('250')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(reply).toMatch(EVICTED);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(idleCapMs - 200);
    expect(elapsed).toBeLessThan(idleCapMs + 4_000);
    expect(await client.waitClosed(STEP_MS)).toBe(true);
  });

  it('a delivered message starts the budget again', async () => {
    const idleCapMs = 2_000;
    mx = await startSmtpFixture({ limits: { idleCapMs } });
    await mx.inbox('busy');
    const { client } = await connectFrom(mx.port, '127.0.4.2');
    expect(await command(client, 'EHLO busy.example')).toMatch(/^250/);
    // Two rounds of 1.2 s idle: 2.4 s in all, past the cap unless the delivery in between resets it.
    for (let round = 0; round < 2; round += 1) {
      for (let i = 0; i < 6; i += 1) {
        expect(await command(client, 'NOOP')).toMatch(/^250/);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(await command(client, 'MAIL FROM:<busy@example.org>')).toMatch(/^250/);
      expect(await command(client, 'RCPT TO:<busy@tempinbox.test>')).toMatch(/^250/);
      expect(await command(client, 'DATA')).toMatch(/^354/);
      expect(await command(client, `Subject: round ${round}\r\n\r\nhello\r\n.`)).toMatch(/^250/);
    }
    expect(client.closed).toBe(false);
  });
});
