import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '../../../test/helpers/child-processes.js';
import { deliver, startKitServer, type KitServer } from '../../client/test/kit-server.js';

/** The built bin (npm test builds the packages first). */
const BIN = resolve(import.meta.dirname, '../dist/main.js');

/** The structured result of a successful call. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  return result.structuredContent as Record<string, unknown>;
}

describe('tempinbox-mcp over stdio, driven by the official MCP client', () => {
  let kit: KitServer;
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = '';

  beforeAll(async () => {
    kit = await startKitServer({ RATE_LIMITS: 'off' });
    // The SDK spawns the server: childEnv gives it this run's marker, so the end-of-run check would see it left.
    transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: childEnv({ TEMPINBOX_URL: kit.server.baseUrl }), stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    client = new Client({ name: 'tempinbox-test', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    // Closing the client closes its transport; this one covers a connect that failed first.
    await transport?.close();
    await kit?.close();
  });

  it('lists the seven tools with input and output schemas, read-only ones marked', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(['create_inbox', 'delete_inbox', 'list_messages', 'read_message', 'wait_for_code', 'wait_for_link', 'wait_for_message']);
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.description, tool.name).toBeTruthy();
    }
    for (const name of ['wait_for_message', 'wait_for_code', 'wait_for_link', 'list_messages', 'read_message']) {
      expect(byName.get(name)?.annotations?.readOnlyHint, name).toBe(true);
    }
    expect(byName.get('delete_inbox')?.annotations?.readOnlyHint).toBe(false);
    const wait = byName.get('wait_for_message');
    expect(Object.keys(wait?.inputSchema.properties ?? {}).sort()).toEqual(['address', 'from', 'subject', 'timeout_seconds', 'to']);
    expect(wait?.inputSchema.properties?.timeout_seconds).toMatchObject({ minimum: 1, maximum: 50 });
    expect(Object.keys(byName.get('wait_for_code')?.outputSchema?.properties ?? {}).sort()).toEqual(['code', 'from', 'message_id', 'subject', 'timed_out']);
  });

  it('creates an inbox, gets a code after an SMTP delivery, lists and reads it, and times out as a result', async () => {
    const created = await call(client, 'create_inbox');
    expect(created).toMatchObject({ address: expect.stringMatching(/@tempinbox\.test$/), username: expect.any(String), expires_at: expect.any(String) });
    const waiting = call(client, 'wait_for_code', { timeout_seconds: 20 });
    await new Promise((done) => setTimeout(done, 300));
    await deliver(kit.server.smtpPort, String(created.address), 'Sign-in code', 'Your verification code is 592046.');
    const code = await waiting;
    expect(code).toMatchObject({ timed_out: false, code: '592046', subject: 'Sign-in code', from: 'Sender <sender@example.org>' });

    const listed = await call(client, 'list_messages');
    expect(listed.messages).toEqual([expect.objectContaining({ id: code.message_id, codes: ['592046'] })]);
    const read = await call(client, 'read_message', { id: code.message_id });
    expect(read).toMatchObject({ id: code.message_id, text: 'Your verification code is 592046.\n', codes: ['592046'], attachments: [] });

    const started = Date.now();
    const timedOut = await client.callTool({ name: 'wait_for_message', arguments: { timeout_seconds: 2 } });
    expect(timedOut.isError ?? false).toBe(false);
    expect(timedOut.structuredContent).toEqual({ timed_out: true });
    expect(Date.now() - started).toBeLessThan(3_500);
  }, 30_000);

  it('answers isError naming the API code for an unknown address and a bad argument, and keeps running', async () => {
    const unknown = await client.callTool({ name: 'wait_for_message', arguments: { address: 'nobody1234@tempinbox.test', timeout_seconds: 2 } });
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toEqual([{ type: 'text', text: expect.stringMatching(/^inbox_not_found: /) }]);
    const bad = await client.callTool({ name: 'wait_for_message', arguments: { timeout_seconds: 500 } });
    expect(bad.isError).toBe(true);
    // Still serving: the same process answers the next call.
    expect(await call(client, 'delete_inbox')).toEqual({ deleted: true });
    expect((await client.listTools()).tools).toHaveLength(7);
    expect(transport.pid).not.toBeNull();
    expect(stderr).toContain('serving');
  }, 20_000);
});
