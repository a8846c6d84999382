import { Type } from '@sinclair/typebox';
import { AUTH_RESULTS } from '../../domain/sender-auth.js';
import { refTo } from './common.js';

/** A verdict keyword of RFC 8601 (the subset every method may give). */
export const AuthResultSchema = Type.Union(AUTH_RESULTS.map((result) => Type.Literal(result)), {
  $id: 'AuthResult',
  description: 'an RFC 8601 verdict keyword',
});

/** Sender authentication of a message (docs/api.md "What a message tells"). */
export const SenderAuthSchema = Type.Object(
  {
    spf: Type.Object({
      result: refTo(AuthResultSchema),
      domain: Type.String({ description: 'the domain checked: of the envelope sender, else of the HELO name' }),
    }),
    dkim: Type.Array(
      Type.Object({ result: refTo(AuthResultSchema), domain: Type.String({ description: 'd=' }), selector: Type.String({ description: 's=' }) }),
      { description: 'one entry per DKIM-Signature; [] for an unsigned message' },
    ),
    dmarc: Type.Object({
      result: refTo(AuthResultSchema),
      domain: Type.String({ description: 'the From header domain' }),
      policy: Type.Union([Type.Literal('none'), Type.Literal('quarantine'), Type.Literal('reject'), Type.Null()], {
        description: 'what the domain asks receivers to do with failing mail; null when it publishes no policy',
      }),
    }),
    arc: Type.Object({ result: refTo(AuthResultSchema) }),
  },
  { $id: 'SenderAuth', description: 'SPF, DKIM, DMARC and ARC verdicts from the SMTP transaction' },
);

/** A link of a message with its visible text. */
export const MessageLinkSchema = Type.Object(
  { url: Type.String(), text: Type.String({ description: 'visible text; "" when none' }) },
  { $id: 'MessageLink' },
);

/** The fields every message shows (check listings, events, detail) about what it tells. */
export const insightFields = {
  codes: Type.Array(Type.String(), { description: 'one-time codes in the subject and text, most likely first; [] when none' }),
  links: Type.Array(refTo(MessageLinkSchema), {
    description: 'http(s) links of the sanitised HTML, else of the text, in order, without duplicates',
  }),
  auth: Type.Union([refTo(SenderAuthSchema), Type.Null()], { description: 'null when MAIL_AUTH=off (or before the check existed)' }),
};
