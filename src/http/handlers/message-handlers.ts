import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireSession, type HttpDeps } from '../http-deps.js';
import { presentMessageDetail } from '../presenters.js';
import type { AttachmentParams, MessageParams } from '../schemas/inbox-schemas.js';
import { contentDisposition, safeContentType } from './download-headers.js';

/** GET /api/messages/:id */
export function messageHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: MessageParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    return presentMessageDetail(await deps.messages.get(session, request.params.id));
  };
}

/** GET /api/messages/:id/raw — the original message as an .eml download. */
export function rawMessageHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: MessageParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    const raw = await deps.messages.raw(session, request.params.id);
    reply
      .type('message/rfc822')
      .header('Content-Disposition', contentDisposition(`${request.params.id}.eml`))
      .header('X-Content-Type-Options', 'nosniff');
    return reply.send(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
  };
}

/** GET /api/messages/:id/attachments/:aid — always a download, never rendered. */
export function attachmentHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: AttachmentParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    const attachment = await deps.messages.attachment(session, request.params.id, request.params.aid);
    reply
      .type(safeContentType(attachment.contentType))
      .header('Content-Disposition', contentDisposition(attachment.filename))
      .header('X-Content-Type-Options', 'nosniff');
    const bytes = attachment.content;
    return reply.send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  };
}

/** DELETE /api/messages/:id */
export function deleteMessageHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: MessageParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    await deps.messages.delete(session, request.params.id);
    return { success: true as const };
  };
}
