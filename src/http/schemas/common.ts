import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES } from '../../domain/errors.js';

/** The one error shape of every failure (docs/api.md "Errors"). */
export const ErrorResponse = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((code) => Type.Literal(code))),
      message: Type.String(),
    }),
  },
  { $id: 'ErrorResponse', description: 'Every failure: a stable snake_case code and a sentence.' },
);

/** `{ success: true }` for deletes. */
export const SuccessResponse = Type.Object({ success: Type.Literal(true) });

/** Response map with the error shape for the listed statuses. */
export function withErrors<T extends TSchema>(ok: T, statuses: number[]): Record<string, TSchema> {
  const map: Record<string, TSchema> = { 200: ok };
  for (const status of statuses) map[String(status)] = Type.Ref('ErrorResponse');
  return map;
}

/** Statuses any /api route may answer besides its own (fair use, outage). */
export const COMMON_ERRORS = [400, 429, 503];

/**
 * A reference to a shared schema (one with an `$id`, registered by `sharedSchemas`), typed as
 * the schema itself. Named schemas become `components.schemas` of the OpenAPI document, so the
 * types generated from it have names (`Message`, `SenderAuth`…) instead of anonymous copies.
 */
export function refTo<T extends TSchema>(schema: T): ReturnType<typeof Type.Unsafe<Static<T>>> {
  if (schema.$id === undefined) throw new Error('refTo needs a schema with an $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}
