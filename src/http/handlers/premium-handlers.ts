import type { FastifyReply, FastifyRequest } from 'fastify';
import { FAILED_REDEEM_PER_ADDRESS } from '../../domain/fair-use.js';
import { openSession, type HttpDeps } from '../http-deps.js';
import type { RedeemBody } from '../schemas/inbox-schemas.js';

/** POST /api/premium/redeem */
export function redeemHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Body: RedeemBody }>, reply: FastifyReply) => {
    // The failed-redeem lockout is decided before any session is made or renewed: a refused
    // redeem stores nothing and sets no cookie (docs/api.md "Premium licenses"), so a flood of
    // refused cookie-less calls cannot fill the sessions table.
    await deps.fairUse.assertNotExhausted(FAILED_REDEEM_PER_ADDRESS, request.ip);
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
