import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { StartupError } from '../config/startup-error.js';

/** The certificate and key STARTTLS offers, as the SMTP listener takes them. */
export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

/**
 * Reads TLS_CERT_FILE and TLS_KEY_FILE and proves they make a TLS context, so that a bad
 * file fails the start naming that file's variable: the certificate must parse, then the key
 * must parse and match it. Throws StartupError.
 */
export function loadTlsFiles(certFile: string, keyFile: string): TlsFiles {
  let cert: Buffer;
  try {
    cert = readFileSync(certFile);
    new X509Certificate(cert);
  } catch (error) {
    throw new StartupError('TLS_CERT_FILE', certFile, 'a readable PEM certificate', error);
  }
  try {
    const key = readFileSync(keyFile);
    createSecureContext({ cert, key });
    return { cert, key };
  } catch (error) {
    throw new StartupError('TLS_KEY_FILE', keyFile, 'a readable PEM private key matching TLS_CERT_FILE', error);
  }
}
