import type { FastifyReply, FastifyRequest } from 'fastify';
import { openSession, type HttpDeps } from '../http-deps.js';
import type { RedeemBody } from '../schemas/inbox-schemas.js';

/** POST /api/premium/redeem */
export function redeemHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Body: RedeemBody }>, reply: FastifyReply) => {
    const session = await openSession(deps, request, reply);
    const result = await deps.licenses.redeem(session, request.body.key, request.ip);
    return {
      success: true as const,
      premium: true as const,
      premium_until: result.premiumUntil.toISOString(),
      limits: result.limits,
    };
  };
}
