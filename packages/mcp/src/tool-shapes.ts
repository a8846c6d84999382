import type { Message, MessageDetail } from '@tempinbox/client';
import * as z from 'zod';

/** Characters of a message's text a wait result carries: enough for any sign-up mail, small for an agent's context. */
export const MAX_TEXT_CHARS = 4000;
/** A wait's default and longest time: under the 60 s an MCP client waits for a tool's answer. */
export const DEFAULT_WAIT_SECONDS = 30;
export const MAX_WAIT_SECONDS = 50;
/** Messages list_messages answers by default and at most. */
export const DEFAULT_LIST = 20;
export const MAX_LIST = 50;

const verdict = z.string().describe('pass, fail, softfail, neutral, none, temperror or permerror');

/** Sender authentication as the API reports it; null when the server does not check. */
export const AuthShape = z
  .object({
    spf: z.object({ result: verdict, domain: z.string() }),
    dkim: z.array(z.object({ result: verdict, domain: z.string(), selector: z.string() })),
    dmarc: z.object({ result: verdict, domain: z.string(), policy: z.string().nullable() }),
    arc: z.object({ result: verdict }),
  })
  .nullable();

export const LinkShape = z.object({ url: z.string(), text: z.string() });

/** A message as a wait result shows it. */
export const WaitedMessageShape = z.object({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  received_at: z.string(),
  text: z.string().describe(`the text, at most ${MAX_TEXT_CHARS} characters (read_message has all of it)`),
  codes: z.array(z.string()),
  links: z.array(LinkShape),
  auth: AuthShape,
});

/** Inputs every wait takes. */
export const waitInput = {
  address: z.string().optional().describe('the inbox; default: the last one create_inbox made'),
  to: z.string().optional().describe('case-insensitive substring of the recipient address (+tag kept), e.g. "alice+signup@"'),
  from: z.string().optional().describe('case-insensitive substring of the sender'),
  subject: z.string().optional().describe('case-insensitive substring of the subject'),
  timeout_seconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).optional().describe(`seconds to wait, ${DEFAULT_WAIT_SECONDS} by default`),
};

/** A message cut to what a wait result carries. */
export function waitedMessage(message: Message): z.infer<typeof WaitedMessageShape> {
  return {
    id: message.id,
    from: message.from,
    to: message.to,
    subject: message.subject,
    received_at: message.date,
    text: cutText(message.body, MAX_TEXT_CHARS),
    codes: message.codes,
    links: message.links,
    auth: message.auth,
  };
}

/** `text` cut to at most `max` UTF-16 units, never between the two halves of a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  const splitsPair = last >= 0xd800 && last <= 0xdbff;
  return text.slice(0, splitsPair ? max - 1 : max);
}

/** A whole message as read_message shows it. */
export function readMessage(message: MessageDetail, format: 'text' | 'html'): Record<string, unknown> {
  const base = {
    id: message.id,
    from: message.from,
    to: message.to,
    subject: message.subject,
    received_at: message.date,
    codes: message.codes,
    links: message.links,
    auth: message.auth,
    attachments: message.attachments.map(({ id, filename, content_type, size }) => ({ id, filename, content_type, size })),
  };
  return format === 'html' ? { ...base, html: message.html ?? '' } : { ...base, text: message.body };
}
