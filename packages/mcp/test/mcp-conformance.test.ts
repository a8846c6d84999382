import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, spawnTestChild, waitForExit } from '../../../test/helpers/child-processes.js';
import { deliver, startKitServer, type KitServer } from '../../client/test/kit-server.js';

/** The built bin (npm test builds the packages first). */
const BIN = resolve(import.meta.dirname, '../dist/main.js');

/** The structured result of a call that must succeed. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  return result.structuredContent as Record<string, unknown>;
}

describe('tempinbox-mcp: waits follow the library semantics per inbox', () => {
  let kit: KitServer;
  let client: Client;

  beforeAll(async () => {
    kit = await startKitServer({ RATE_LIMITS: 'off' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: childEnv({ TEMPINBOX_URL: kit.server.baseUrl }), stderr: 'pipe' });
    client = new Client({ name: 'tempinbox-conformance', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await kit?.close();
  });

  it('never returns one message twice, however the address of the inbox is written', async () => {
    const { address, username } = (await call(client, 'create_inbox')) as { address: string; username: string };
    expect(await deliver(kit.server.smtpPort, address, 'only one', 'Your code is 615243')).toMatch(/^250/);
    const first = await call(client, 'wait_for_code', { address: address.toUpperCase(), timeout_seconds: 10 });
    expect(first).toMatchObject({ timed_out: false, code: '615243' });
    for (const spelling of [undefined, address, username, username.toUpperCase()]) {
      const again = await call(client, 'wait_for_message', { ...(spelling === undefined ? {} : { address: spelling }), timeout_seconds: 1 });
      expect(again, String(spelling)).toEqual({ timed_out: true });
    }
    // A free session gets its active inbox back from create_inbox: still the same inbox.
    expect(await call(client, 'create_inbox')).toMatchObject({ address });
    expect(await call(client, 'wait_for_message', { timeout_seconds: 1 })).toEqual({ timed_out: true });
  }, 30_000);
});

describe('tempinbox-mcp started with a TEMPINBOX_URL that is no URL', () => {
  it('exits 1 at once with one line on stderr naming the variable, no stack trace', async () => {
    const child = spawnTestChild(process.execPath, [BIN], { env: { TEMPINBOX_URL: 'not a url' } });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const code = await waitForExit(child, 10_000);
    if (code === undefined) child.kill('SIGKILL');
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^tempinbox-mcp: TEMPINBOX_URL /);
  });
});
