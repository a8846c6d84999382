import { pino, type Logger } from 'pino';
import type { Config } from '../config/schema.js';

/**
 * JSON logs on stdout (one object per line). Cookies and message content are never logged:
 * request logging is ours (no headers), and redaction catches accidental cookie fields.
 */
export function createLogger(level: Config['logLevel'], destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'tempinbox' },
      redact: { paths: ['req.headers.cookie', 'res.headers["set-cookie"]', 'cookie', 'token', 'key'], censor: '[redacted]' },
    },
    destination ?? process.stdout,
  );
}
