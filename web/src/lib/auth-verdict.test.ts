import { describe, expect, it } from 'vitest';
import type { SenderAuth } from '@tempinbox/client';
import { describeAuth } from './auth-verdict.js';

const base: SenderAuth = {
  spf: { result: 'none', domain: 'example.com' },
  dkim: [],
  dmarc: { result: 'none', domain: 'example.com', policy: null },
  arc: { result: 'none' },
};

/** What the server says of mail claiming bank.test (p=reject) from evil.test's server with a second From field. */
const twoFromFields: SenderAuth = {
  spf: { result: 'pass', domain: 'evil.test' },
  dkim: [],
  dmarc: { result: 'permerror', domain: '', policy: null },
  arc: { result: 'none' },
};

describe('describeAuth', () => {
  it('is green only for a DMARC pass, naming the From domain, and says who else signed', () => {
    const verdict = describeAuth({
      ...base,
      spf: { result: 'pass', domain: 'bounces.example.com' },
      dkim: [{ result: 'pass', domain: 'mailer.example', selector: 's1' }, { result: 'pass', domain: 'example.com', selector: 's2' }],
      dmarc: { result: 'pass', domain: 'example.com', policy: 'reject' },
    });
    expect(verdict).toMatchObject({ tone: 'good', label: 'Verified as example.com ✓' });
    expect(verdict.details[0]).toBe('DMARC passed: SPF or DKIM confirms that it comes from example.com.');
    expect(verdict.details).toContain('DKIM passed: signed by mailer.example, which is not the From domain example.com; a signature vouches only for its own domain.');
    expect(verdict.details).toContain('DKIM passed: signed by example.com, and nothing signed was changed on the way.');
  });

  it('is never green without a DMARC pass: a passing signature or SPF of any domain is grey and named', () => {
    const cases: Array<[SenderAuth, string]> = [
      // Signed by evil.test, From another domain that publishes no DMARC record.
      [{ ...base, spf: { result: 'pass', domain: 'evil.test' }, dkim: [{ result: 'pass', domain: 'evil.test', selector: 's1' }], dmarc: { result: 'none', domain: 'news.test', policy: null } }, 'Signed by evil.test, not news.test'],
      // Signed by the From domain itself, which publishes no DMARC record.
      [{ ...base, dkim: [{ result: 'pass', domain: 'example.com', selector: 's1' }] }, 'Signed by example.com'],
      [{ ...base, spf: { result: 'pass', domain: 'evil.test' } }, 'Sent by a server of evil.test, not example.com'],
      [{ ...base, spf: { result: 'pass', domain: 'example.com' } }, 'Sent by a server of example.com'],
      [{ ...base, dmarc: { result: 'temperror', domain: 'example.com', policy: null }, dkim: [{ result: 'pass', domain: 'evil.test', selector: 's' }] }, 'Signed by evil.test, not example.com'],
      // A pass without a domain names nobody: not green either.
      [{ ...base, dmarc: { result: 'pass', domain: '', policy: null } }, 'Sender not verified'],
    ];
    for (const [auth, label] of cases) expect(describeAuth(auth), label).toEqual(expect.objectContaining({ tone: 'neutral', label }));
    const foreign = describeAuth(cases[0]?.[0] ?? base);
    expect(foreign.details).toContain('DKIM passed: signed by evil.test, which is not the From domain news.test; a signature vouches only for its own domain.');
    expect(foreign.details).toContain('SPF passed: the server that delivered it may send mail for evil.test, which is not the From domain news.test.');
  });

  it('is red when From names no single author (DMARC permerror), and never says the domain publishes no policy', () => {
    const verdict = describeAuth(twoFromFields);
    expect(verdict).toMatchObject({ tone: 'bad', label: 'Sender cannot be verified ✗' });
    expect(verdict.details[0]).toBe(
      'DMARC error: the message does not name exactly one sender in From (it has no From field, several, or several addresses in one), so no check can confirm who sent it, and the sender shown may not be the one that was checked.',
    );
    expect(verdict.details.join(' ')).not.toContain('publishes no DMARC policy');
    expect(verdict.details).toContain('SPF passed: the server that delivered it may send mail for evil.test.');
    // A message stored before the server said permerror: `none` without a From domain, read the same way.
    expect(describeAuth({ ...twoFromFields, dmarc: { result: 'none', domain: '', policy: null } })).toMatchObject({ tone: 'bad', label: 'Sender cannot be verified ✗' });
    // Even with a valid signature of some domain.
    expect(describeAuth({ ...twoFromFields, dkim: [{ result: 'pass', domain: 'evil.test', selector: 's1' }] })).toMatchObject({ tone: 'bad', label: 'Sender cannot be verified ✗' });
  });

  it('says a DMARC failure plainly, with what a real mailbox would do', () => {
    const verdict = describeAuth({ ...base, spf: { result: 'fail', domain: 'example.com' }, dmarc: { result: 'fail', domain: 'example.com', policy: 'reject' } });
    expect(verdict).toMatchObject({ tone: 'bad', label: 'Not verified as example.com ✗' });
    expect(verdict.details[0]).toContain('A real mailbox would refuse it.');
    expect(verdict.details).toContain('SPF failed: example.com says the server that delivered it may not send its mail.');
    const signedByOther = describeAuth({ ...base, dkim: [{ result: 'pass', domain: 'evil.test', selector: 's1' }], dmarc: { result: 'fail', domain: 'bank.test', policy: 'reject' } });
    expect(signedByOther).toMatchObject({ tone: 'bad', label: 'Not verified as bank.test ✗' });
  });

  it('reports an SPF failure, a broken signature (before a valid one of another domain) and an unsigned message', () => {
    expect(describeAuth({ ...base, spf: { result: 'fail', domain: 'example.com' } })).toMatchObject({ tone: 'bad', label: 'SPF failed ✗' });
    const broken = describeAuth({ ...base, dkim: [{ result: 'fail', domain: 'example.com', selector: 's' }] });
    expect(broken).toMatchObject({ tone: 'bad', label: 'Signature of example.com broken ✗' });
    const brokenAndOther = describeAuth({ ...base, dkim: [{ result: 'pass', domain: 'evil.test', selector: 's' }, { result: 'fail', domain: 'example.com', selector: 's' }] });
    expect(brokenAndOther).toMatchObject({ tone: 'bad', label: 'Signature of example.com broken ✗' });
    const unsigned = describeAuth(base);
    expect(unsigned).toMatchObject({ tone: 'neutral', label: 'Sender not verified' });
    expect(unsigned.details).toContain('DKIM: the message is not signed.');
    expect(unsigned.details[0]).toBe('DMARC none: example.com publishes no DMARC policy.');
  });

  it('does not blame the sender when DNS timed out', () => {
    expect(describeAuth({ ...base, spf: { result: 'temperror', domain: 'example.com' } })).toMatchObject({ tone: 'neutral', label: 'Sender not checked (DNS timeout)' });
  });

  it('mentions ARC only when it says something', () => {
    expect(describeAuth(base).details.some((line) => line.startsWith('ARC'))).toBe(false);
    expect(describeAuth({ ...base, arc: { result: 'pass' } }).details.at(-1)).toContain('ARC passed');
  });
});
