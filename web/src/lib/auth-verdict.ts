import type { AuthResult, SenderAuth } from '@tempinbox/client';

/** How the badge looks: good (green ✓), bad (red ✗), or neither (grey). */
export type AuthTone = 'good' | 'bad' | 'neutral';

/** A message's sender checks in words: one short badge, and a sentence per check. */
export interface AuthVerdict {
  tone: AuthTone;
  label: string;
  details: string[];
}

const or = (domain: string, fallback: string) => (domain === '' ? fallback : domain);

/** What a real mailbox would do with a message failing DMARC, by the domain's policy. */
const POLICY_WORDS: Record<string, string> = {
  reject: 'would refuse it',
  quarantine: 'would put it in the spam folder',
  none: 'would still deliver it (the domain asks for no action)',
};

/** ", which is not the From domain x" when `domain` is another than the From domain `from`. */
function notFrom(domain: string, from: string): string {
  return from !== '' && domain !== '' && domain !== from ? `, which is not the From domain ${from}` : '';
}

function spfWords(result: AuthResult, domain: string, from: string): string {
  const who = or(domain, 'the sender’s domain');
  switch (result) {
    case 'pass': return `SPF passed: the server that delivered it may send mail for ${who}${notFrom(domain, from)}.`;
    case 'fail': return `SPF failed: ${who} says the server that delivered it may not send its mail.`;
    case 'softfail': return `SPF soft fail: ${who} says the delivering server is probably not one of its own.`;
    case 'neutral': return `SPF neutral: ${who} says nothing about the delivering server.`;
    case 'none': return `SPF none: ${who} publishes no list of its mail servers.`;
    case 'temperror': return 'SPF could not be checked: DNS did not answer in time.';
    case 'permerror': return `SPF error: the SPF record of ${who} is broken.`;
  }
}

function dkimWords(result: AuthResult, domain: string, selector: string, from: string): string {
  const who = or(domain, 'an unnamed domain');
  switch (result) {
    case 'pass': return notFrom(domain, from) === ''
      ? `DKIM passed: signed by ${who}, and nothing signed was changed on the way.`
      : `DKIM passed: signed by ${who}${notFrom(domain, from)}; a signature vouches only for its own domain.`;
    case 'fail': return `DKIM failed: the signature of ${who} does not match; the message was changed after signing, or the signature is forged.`;
    case 'temperror': return `DKIM could not be checked for ${who}: DNS did not answer in time.`;
    case 'permerror': return `DKIM error: the key of ${who} (selector “${selector}”) is missing or unusable.`;
    default: return `DKIM ${result}: the signature of ${who} gave no verdict.`;
  }
}

/**
 * True when the From field names no single author, so nothing can confirm the sender: the
 * server says `permerror` (no From field, several, or several addresses in one); a message
 * stored before it did says `none` without a From domain for the same mail.
 */
function noSingleAuthor(auth: SenderAuth): boolean {
  return auth.dmarc.result === 'permerror' || (auth.dmarc.result === 'none' && auth.dmarc.domain === '');
}

function dmarcWords(auth: SenderAuth): string {
  const { result, domain, policy } = auth.dmarc;
  const who = or(domain, 'the From domain');
  if (noSingleAuthor(auth)) {
    return 'DMARC error: the message does not name exactly one sender in From (it has no From field, several, or several addresses in one), so no check can confirm who sent it, and the sender shown may not be the one that was checked.';
  }
  switch (result) {
    case 'pass': return `DMARC passed: SPF or DKIM confirms that it comes from ${who}.`;
    case 'fail': return `DMARC failed: neither SPF nor DKIM confirms that it comes from ${who}. A real mailbox ${POLICY_WORDS[policy ?? ''] ?? 'would decide by itself (the domain sets no policy)'}.`;
    case 'none': return `DMARC none: ${who} publishes no DMARC policy.`;
    case 'temperror': return 'DMARC could not be checked: DNS did not answer in time.';
    default: return `DMARC ${result} for ${who}.`;
  }
}

function arcWords(result: AuthResult): string | null {
  if (result === 'pass') return 'ARC passed: a forwarding server vouched for the checks made before it.';
  if (result === 'fail') return 'ARC failed: the chain of forwarding servers is broken.';
  return null;
}

/** "evil.test, not bank.test" when `domain` is not the From domain, else the domain alone. */
function named(domain: string, from: string): string {
  return notFrom(domain, from) === '' ? domain : `${domain}, not ${from}`;
}

/**
 * The badge and plain-words explanation of a message's `auth` (docs/web.md "Reading"): the one
 * place the page turns verdicts into a colour. Green only when DMARC passed for a named From
 * domain: that is the one verdict about the sender the reader sees. Red for what says the sender
 * is not who it claims: a DMARC failure, a From field naming no single author, a broken
 * signature, an SPF failure. Everything else is grey, and a signature or an SPF pass of a
 * domain other than the From domain is named as such ("Signed by evil.test, not bank.test"):
 * it proves who sent it, not that the From line is true.
 */
export function describeAuth(auth: SenderAuth): AuthVerdict {
  const from = auth.dmarc.domain;
  const details = [
    dmarcWords(auth),
    ...(auth.dkim.length === 0 ? ['DKIM: the message is not signed.'] : auth.dkim.map((sig) => dkimWords(sig.result, sig.domain, sig.selector, from))),
    spfWords(auth.spf.result, auth.spf.domain, from),
    arcWords(auth.arc.result),
  ].filter((line): line is string => line !== null);
  const signed = auth.dkim.filter((sig) => sig.result === 'pass' && sig.domain !== '');
  // Prefer the signature of the From domain, which is the one that says who sent it.
  const signer = signed.find((sig) => sig.domain === from) ?? signed[0];
  const broken = auth.dkim.find((sig) => sig.result === 'fail' || sig.result === 'permerror');
  const verdict = (tone: AuthTone, label: string): AuthVerdict => ({ tone, label, details });
  if (auth.dmarc.result === 'pass' && from !== '') return verdict('good', `Verified as ${from} ✓`);
  if (auth.dmarc.result === 'fail') return verdict('bad', `Not verified as ${or(from, 'its sender')} ✗`);
  if (noSingleAuthor(auth)) return verdict('bad', 'Sender cannot be verified ✗');
  if (broken !== undefined) return verdict('bad', `Signature of ${or(broken.domain, 'the sender')} broken ✗`);
  if (auth.spf.result === 'fail') return verdict('bad', 'SPF failed ✗');
  if (auth.spf.result === 'softfail') return verdict('bad', 'SPF soft fail ✗');
  if (signer !== undefined) return verdict('neutral', `Signed by ${named(signer.domain, from)}`);
  if (auth.spf.result === 'pass' && auth.spf.domain !== '') return verdict('neutral', `Sent by a server of ${named(auth.spf.domain, from)}`);
  if ([auth.spf.result, auth.dmarc.result, ...auth.dkim.map((sig) => sig.result)].includes('temperror')) return verdict('neutral', 'Sender not checked (DNS timeout)');
  return verdict('neutral', 'Sender not verified');
}
