/**
 * Entry point of a mail-parsing worker thread (see worker-mail-parser.ts): parses each
 * message it is sent with the in-thread parser and posts the result back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ParsedMail } from '../domain/types.js';
import { ConcatBlob } from './concat-blob.js';
import { createInlineMailParser } from './inline-mail-parser.js';
import type { MailLimits } from './mail-limits.js';
import type { ParseReply, ParseRequest } from './worker-mail-parser.js';

// This thread only parses: the faster Blob cannot surprise any other code here (see ConcatBlob).
globalThis.Blob = ConcatBlob as unknown as typeof Blob;

const port = parentPort;
if (port === null) throw new Error('parse-worker.ts runs as a worker thread only');

const { limits } = workerData as { limits: MailLimits };

port.on('message', (request: ParseRequest) => {
  // A parser per message, so each reply carries only its own message's errors.
  const errors: string[] = [];
  const parse = createInlineMailParser({
    limits,
    onParseError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
  });
  void parse(request.raw, request.context).then((parsed: ParsedMail) => {
    const reply: ParseReply = { id: request.id, parsed, errors };
    // Attachment bytes move to the main thread instead of being copied.
    const transfer = parsed.attachments.map((attachment) => attachment.content.buffer).filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
    port.postMessage(reply, [...new Set(transfer)]);
  });
});
