import { TempInboxError, type Inbox, type TempInboxClient } from '@tempinbox/client';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import {
  AuthShape, DEFAULT_LIST, DEFAULT_WAIT_SECONDS, LinkShape, MAX_LIST, readMessage, waitedMessage, WaitedMessageShape, waitInput,
} from './tool-shapes.js';

/** The process's one session: the client and the inboxes this process made or named. */
export interface Session {
  client: TempInboxClient;
  inboxes: Map<string, Inbox>;
  last: string | undefined;
  log: (line: string) => void;
}

/** A tool's answer: the structured result, and a line of text for clients that show only text. */
function ok(structured: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** A failed call: a result with isError and one line naming the API's error code. */
function failed(error: unknown): CallToolResult {
  const code = error instanceof TempInboxError ? error.code : 'internal_error';
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}

/**
 * The key of an inbox among the handles: its username, lowercase. A username is unique across
 * domains and case-insensitive, so `Alice@x`, `alice@x` and `alice` are one inbox and share one
 * handle: a message one wait returned is never returned by a wait written another way.
 */
function inboxKey(address: string): string {
  return (address.split('@')[0] ?? '').toLowerCase();
}

/** The handle for `address`, else for the last inbox created. */
function handle(session: Session, address: string | undefined): Inbox {
  const name = address ?? session.last;
  if (name === undefined) throw new TempInboxError(0, 'no_inbox', 'No inbox yet: call create_inbox first, or pass address.');
  let inbox = session.inboxes.get(inboxKey(name));
  if (inbox === undefined) {
    inbox = session.client.inbox(name);
    session.inboxes.set(inboxKey(name), inbox);
  }
  return inbox;
}

/** Runs a tool body; any failure becomes an isError result (the process never exits on one). */
async function guarded(session: Session, tool: string, body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof TempInboxError && error.code === 'timeout') throw error;
    session.log(`${tool} failed: ${error instanceof Error ? error.message : String(error)}`);
    return failed(error);
  }
}

/** Runs a wait; a timeout is the normal answer `{timed_out: true}`, not an error. */
async function waited(session: Session, tool: string, seconds: number | undefined, body: (timeout: number) => Promise<CallToolResult>): Promise<CallToolResult> {
  const timeout = (seconds ?? DEFAULT_WAIT_SECONDS) * 1000;
  try {
    return await guarded(session, tool, () => body(timeout));
  } catch {
    return ok({ timed_out: true }, `Nothing matching arrived within ${timeout / 1000} s.`);
  }
}

const readOnly = { readOnlyHint: true, openWorldHint: true };

/** Registers the seven tools of tempinbox-mcp on `server`. */
export function registerTools(server: McpServer, session: Session): void {
  server.registerTool(
    'create_inbox',
    {
      description: 'Create a temporary e-mail inbox (a free session gets its current one back). Returns its address, to type into a sign-up form.',
      inputSchema: z.object({
        username: z.string().optional().describe('the local part wanted (Premium only)'),
        domain: z.string().optional().describe('one of the served domains; default the first'),
      }),
      outputSchema: z.object({ address: z.string(), username: z.string(), expires_at: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ username, domain }) =>
      guarded(session, 'create_inbox', async () => {
        const inbox = await session.client.createInbox({ username, domain });
        // A free session gets its active inbox back: the handle it has keeps what its waits returned.
        if (!session.inboxes.has(inboxKey(inbox.address))) session.inboxes.set(inboxKey(inbox.address), inbox);
        session.last = inbox.address;
        const result = { address: inbox.address, username: inbox.username, expires_at: inbox.expiresAt.toISOString() };
        return ok(result, `Created ${inbox.address} (expires ${result.expires_at}).`);
      }),
  );

  server.registerTool(
    'wait_for_message',
    {
      description: 'Wait for the oldest message not yet returned by a wait on this inbox that matches the filters. Mail that already arrived is returned at once.',
      inputSchema: z.object(waitInput),
      outputSchema: z.object({ timed_out: z.boolean(), message: WaitedMessageShape.optional() }),
      annotations: readOnly,
    },
    async ({ address, to, from, subject, timeout_seconds }) =>
      waited(session, 'wait_for_message', timeout_seconds, async (timeout) => {
        const message = await handle(session, address).waitForMessage({ to, from, subject, timeout });
        return ok({ timed_out: false, message: waitedMessage(message) }, `${message.id} from ${message.from}: ${message.subject}`);
      }),
  );

  server.registerTool(
    'wait_for_code',
    {
      description: 'Wait for a message with a one-time code (as wait_for_message) and return its most likely code.',
      inputSchema: z.object(waitInput),
      outputSchema: z.object({ timed_out: z.boolean(), code: z.string().optional(), message_id: z.string().optional(), subject: z.string().optional(), from: z.string().optional() }),
      annotations: readOnly,
    },
    async ({ address, to, from, subject, timeout_seconds }) =>
      waited(session, 'wait_for_code', timeout_seconds, async (timeout) => {
        const { code, message } = await handle(session, address).waitForCode({ to, from, subject, timeout });
        return ok({ timed_out: false, code, message_id: message.id, subject: message.subject, from: message.from }, code);
      }),
  );

  server.registerTool(
    'wait_for_link',
    {
      description: 'Wait for a message with a link (as wait_for_message) whose URL or text contains `match` (any link without it) and return that link.',
      inputSchema: z.object({ match: z.string().optional().describe('case-insensitive substring of the link URL or its text'), ...waitInput }),
      outputSchema: z.object({ timed_out: z.boolean(), url: z.string().optional(), text: z.string().optional(), message_id: z.string().optional() }),
      annotations: readOnly,
    },
    async ({ match, address, to, from, subject, timeout_seconds }) =>
      waited(session, 'wait_for_link', timeout_seconds, async (timeout) => {
        const link = await handle(session, address).waitForLink({ match, to, from, subject, timeout });
        return ok({ timed_out: false, url: link.url, text: link.text, message_id: link.message.id }, link.url);
      }),
  );

  server.registerTool(
    'list_messages',
    {
      description: 'List the newest messages of an inbox, newest first.',
      inputSchema: z.object({
        address: waitInput.address,
        limit: z.number().int().min(1).max(MAX_LIST).optional().describe(`messages to list, ${DEFAULT_LIST} by default`),
      }),
      outputSchema: z.object({
        messages: z.array(z.object({ id: z.string(), from: z.string(), subject: z.string(), received_at: z.string(), codes: z.array(z.string()) })),
      }),
      annotations: readOnly,
    },
    async ({ address, limit }) =>
      guarded(session, 'list_messages', async () => {
        const messages = [];
        for await (const message of handle(session, address).messages()) {
          if (messages.length >= (limit ?? DEFAULT_LIST)) break;
          messages.push({ id: message.id, from: message.from, subject: message.subject, received_at: message.date, codes: message.codes });
        }
        return ok({ messages }, messages.length === 0 ? 'No messages.' : messages.map((m) => `${m.id} ${m.from}: ${m.subject}`).join('\n'));
      }),
  );

  server.registerTool(
    'read_message',
    {
      description: 'Read one whole message by id: its text (or sanitised HTML), codes, links, sender checks and attachments.',
      inputSchema: z.object({ id: z.string().describe('a message id from a wait or list_messages'), format: z.enum(['text', 'html']).optional() }),
      outputSchema: z.object({
        id: z.string(),
        from: z.string(),
        to: z.string(),
        subject: z.string(),
        received_at: z.string(),
        text: z.string().optional(),
        html: z.string().optional(),
        codes: z.array(z.string()),
        links: z.array(LinkShape),
        auth: AuthShape,
        attachments: z.array(z.object({ id: z.string(), filename: z.string(), content_type: z.string(), size: z.number() })),
      }),
      annotations: readOnly,
    },
    async ({ id, format }) =>
      guarded(session, 'read_message', async () => {
        // A message is read by id alone (any inbox of the session): no handle is needed.
        const message = await (session.last === undefined ? session.client.inbox('') : handle(session, undefined)).message(id);
        const result = readMessage(message, format ?? 'text');
        return ok(result, String(result.text ?? result.html));
      }),
  );

  server.registerTool(
    'delete_inbox',
    {
      description: 'Discard an inbox and its messages.',
      inputSchema: z.object({ address: waitInput.address }),
      outputSchema: z.object({ deleted: z.literal(true) }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    async ({ address }) =>
      guarded(session, 'delete_inbox', async () => {
        const inbox = handle(session, address);
        await inbox.delete();
        session.inboxes.delete(inboxKey(inbox.address));
        return ok({ deleted: true }, `Deleted ${inbox.address}.`);
      }),
  );
}
