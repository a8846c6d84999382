import type { SenderAuth } from '../domain/sender-auth.js';
import { at, authorProblem, signatureRows } from './map-mailauth-result.js';

/** RFC 5322 §2.1.1: a line MUST NOT be longer than 998 characters. */
const MAX_LINE = 998;

/** One resinfo (RFC 8601 §2.2) made safe for a header line: no control characters, bounded. */
function clean(info: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
  return info.replace(/[\x00-\x1f\x7f]+/g, ' ').trim().slice(0, MAX_LINE - 1);
}

/**
 * The `Authentication-Results:` header (RFC 8601) of our verdicts, one method per line:
 * mailauth's resinfo text (with its comments and properties, e.g. `header.d=`, `smtp.mailfrom=`),
 * its keyword replaced where the API's verdict differs (see toDkimResult), so that the
 * header and the JSON never disagree. CRLF-ended.
 */
export function authenticationResultsHeader(serverName: string, result: unknown, auth: SenderAuth): string {
  const dkim = signatureRows(result).map((row, index) => {
    const info = typeof at(row, 'info') === 'string' ? (at(row, 'info') as string) : '';
    const verdict = auth.dkim[index]?.result ?? 'permerror';
    return info.startsWith('dkim=') ? info.replace(/^dkim=\S+/, `dkim=${verdict}`) : `dkim=${verdict}`;
  });
  const infos = [
    ...(dkim.length > 0 ? dkim : [result === undefined ? 'dkim=temperror' : 'dkim=none (message not signed)']),
    infoOf(result, 'spf') ?? `spf=${auth.spf.result}`,
    infoOf(result, 'arc') ?? `arc=${auth.arc.result}`,
    dmarcInfo(result, auth),
  ];
  return `Authentication-Results: ${serverName};\r\n ${infos.map(clean).join(';\r\n ')}\r\n`;
}

/** The resinfo mailauth wrote for one method, if any. */
function infoOf(result: unknown, method: 'spf' | 'arc' | 'dmarc'): string | undefined {
  const info = at(result, method, 'info');
  return typeof info === 'string' && info.startsWith(`${method}=`) ? info : undefined;
}

/**
 * The DMARC resinfo: mailauth's, unless the From field names no single author, where ours says
 * `permerror` and why in a comment (mailauth evaluates several addresses of one domain, and
 * writes nothing when it evaluates nothing).
 */
function dmarcInfo(result: unknown, auth: SenderAuth): string {
  const problem = result === undefined ? undefined : authorProblem(result);
  if (problem !== undefined && auth.dmarc.result === 'permerror') return `dmarc=permerror (${problem})`;
  return infoOf(result, 'dmarc') ?? `dmarc=${auth.dmarc.result}`;
}

/** The header for verdicts mailauth did not give (the checks could not run at all). */
export function formatAuthenticationResults(serverName: string, auth: SenderAuth): string {
  return authenticationResultsHeader(serverName, undefined, auth);
}
