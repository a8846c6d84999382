/**
 * A mail-parsing worker thread of the pool in worker-mail-parser.ts: parses each message it
 * is given with the in-thread parser and answers the parse, moving attachment bytes.
 */
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import type { ParsedMail } from '../domain/types.js';
import { ConcatBlob } from './concat-blob.js';
import { createInlineMailParser } from './inline-mail-parser.js';
import type { MailLimits } from './mail-limits.js';
import type { ParseReply, ParseRequest } from './worker-mail-parser.js';

// This thread only parses: the faster Blob cannot surprise any other code here (see ConcatBlob).
globalThis.Blob = ConcatBlob as unknown as typeof Blob;

const { limits } = workerData as { limits: MailLimits };

/** A reply whose attachment buffers move to the main thread instead of being copied. */
class MovedReply {
  constructor(private readonly reply: ParseReply) {}

  get [transferableSymbol](): ArrayBuffer[] {
    const buffers = this.reply.parsed.attachments.map((attachment) => attachment.content.buffer);
    return [...new Set(buffers.filter((buffer): buffer is ArrayBuffer => buffer instanceof ArrayBuffer))];
  }

  get [valueSymbol](): ParseReply {
    return this.reply;
  }
}

/** Parses one message; each reply carries only its own message's recovered errors. */
export async function parseInWorker(request: ParseRequest): Promise<ParseReply> {
  const errors: string[] = [];
  const parse = createInlineMailParser({
    limits,
    onParseError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
  });
  const parsed: ParsedMail = await parse(request.raw, request.context);
  // piscina unwraps the value and transfers the buffers (its "movable" protocol).
  return move(new MovedReply({ parsed, errors })) as unknown as ParseReply;
}
