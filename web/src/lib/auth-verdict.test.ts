import { describe, expect, it } from 'vitest';
import type { SenderAuth } from '@tempinbox/client';
import { describeAuth } from './auth-verdict.js';

const base: SenderAuth = {
  spf: { result: 'none', domain: 'example.com' },
  dkim: [],
  dmarc: { result: 'none', domain: 'example.com', policy: null },
  arc: { result: 'none' },
};

describe('describeAuth', () => {
  it('names the From domain’s valid signature first', () => {
    const verdict = describeAuth({
      ...base,
      spf: { result: 'pass', domain: 'bounces.example.com' },
      dkim: [{ result: 'pass', domain: 'mailer.example', selector: 's1' }, { result: 'pass', domain: 'example.com', selector: 's2' }],
      dmarc: { result: 'pass', domain: 'example.com', policy: 'reject' },
    });
    expect(verdict).toMatchObject({ tone: 'good', label: 'Signed by example.com ✓' });
    expect(verdict.details[0]).toBe('DMARC passed: SPF or DKIM confirms that it comes from example.com.');
    expect(verdict.details).toContain('DKIM passed: signed by mailer.example, and nothing signed was changed on the way.');
  });

  it('says a DMARC failure plainly, with what a real mailbox would do', () => {
    const verdict = describeAuth({ ...base, spf: { result: 'fail', domain: 'example.com' }, dmarc: { result: 'fail', domain: 'example.com', policy: 'reject' } });
    expect(verdict).toMatchObject({ tone: 'bad', label: 'Not verified as example.com ✗' });
    expect(verdict.details[0]).toContain('A real mailbox would refuse it.');
    expect(verdict.details).toContain('SPF failed: example.com says the server that delivered it may not send its mail.');
  });

  it('reports an SPF failure, a broken signature and an unsigned message', () => {
    expect(describeAuth({ ...base, spf: { result: 'fail', domain: 'example.com' } })).toMatchObject({ tone: 'bad', label: 'SPF failed ✗' });
    const broken = describeAuth({ ...base, dkim: [{ result: 'fail', domain: 'example.com', selector: 's' }] });
    expect(broken).toMatchObject({ tone: 'bad', label: 'Signature of example.com broken ✗' });
    const unsigned = describeAuth(base);
    expect(unsigned).toMatchObject({ tone: 'neutral', label: 'Sender not verified' });
    expect(unsigned.details).toContain('DKIM: the message is not signed.');
  });

  it('does not blame the sender when DNS timed out', () => {
    expect(describeAuth({ ...base, spf: { result: 'temperror', domain: 'example.com' } })).toMatchObject({ tone: 'neutral', label: 'Sender not checked (DNS timeout)' });
  });

  it('mentions ARC only when it says something', () => {
    expect(describeAuth(base).details.some((line) => line.startsWith('ARC'))).toBe(false);
    expect(describeAuth({ ...base, arc: { result: 'pass' } }).details.at(-1)).toContain('ARC passed');
  });
});
