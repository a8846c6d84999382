import { describe, expect, it } from 'vitest';
import { authenticationResultsHeader } from './authentication-results-header.js';
import { authorProblem, mapMailauthResult, toAuthResult, unverified } from './map-mailauth-result.js';

const row = (result: string, extra: Record<string, unknown> = {}) => ({
  signingDomain: 'example.org',
  selector: 's1',
  info: `dkim=${result} header.d=example.org header.s=s1`,
  status: { result, ...extra },
});

describe('mapMailauthResult', () => {
  it('maps an unsigned message to dkim [] and a missing DMARC evaluation (no single author domain) to permerror', () => {
    const auth = mapMailauthResult({
      dkim: { results: [{ status: { result: 'none' }, info: 'dkim=none (message not signed)' }], fromFields: 1, headerFrom: ['a@b.example@example.org'] },
      spf: { domain: 'example.org', status: { result: 'softfail' } },
      dmarc: false,
      arc: { status: { result: 'none' } },
    });
    expect(auth).toEqual({
      spf: { result: 'softfail', domain: 'example.org' },
      dkim: [],
      dmarc: { result: 'permerror', domain: '', policy: null },
      arc: { result: 'none' },
    });
  });

  it('gives DMARC permerror when From names no single author: two From fields, none, or several addresses', () => {
    // What mailauth evaluated, for a From that names one author of example.org.
    const evaluated = { domain: 'example.org', policy: 'reject', status: { result: 'pass', header: { from: 'example.org' } } };
    const cases: Array<[string, Record<string, unknown>, string | undefined]> = [
      ['one author', { fromFields: 1, headerFrom: ['alice@example.org'] }, undefined],
      ['two From fields', { fromFields: 2, headerFrom: ['security@bank.test', 'x@evil.test'] }, '2 From fields'],
      ['no From field', { fromFields: 0, headerFrom: [] }, 'no From field'],
      ['a From field with no address', { fromFields: 1, headerFrom: [] }, 'no address in From'],
      ['two addresses of two domains', { fromFields: 1, headerFrom: ['security@bank.test', 'x@evil.test'] }, '2 addresses in From'],
      ['two addresses of one domain', { fromFields: 1, headerFrom: ['alice@example.org', 'bob@example.org'] }, '2 addresses in From'],
    ];
    for (const [name, from, problem] of cases) {
      // mailauth evaluates DMARC for one or several addresses of one domain, and nothing otherwise.
      const oneDomain = problem === undefined || name === 'two addresses of one domain';
      const result = { dkim: { results: [], ...from }, spf: { domain: 'evil.test', status: { result: 'pass' } }, dmarc: oneDomain ? evaluated : false };
      expect(authorProblem(result), name).toBe(problem);
      const auth = mapMailauthResult(result);
      expect(auth.dmarc, name).toEqual(problem === undefined ? { result: 'pass', domain: 'example.org', policy: 'reject' } : { result: 'permerror', domain: '', policy: null });
      const header = authenticationResultsHeader('mx.test', result, auth);
      if (problem !== undefined) expect(header.endsWith(`;\r\n dmarc=permerror (${problem})\r\n`), header).toBe(true);
    }
  });

  it('reads each signature, a missing key as permerror, and DMARC with its policy', () => {
    const auth = mapMailauthResult({
      dkim: { results: [row('pass'), row('neutral', { comment: 'no key' }), row('policy'), row('neutral', { comment: 'expired' })] },
      spf: { domain: 'example.org', status: { result: 'pass' } },
      dmarc: { domain: 'example.org', policy: 'quarantine', status: { result: 'fail', header: { from: 'mail.example.org' } } },
      arc: { status: { result: 'pass' } },
    });
    expect(auth.dkim.map((d) => d.result)).toEqual(['pass', 'permerror', 'fail', 'neutral']);
    expect(auth.dmarc).toEqual({ result: 'fail', domain: 'mail.example.org', policy: 'quarantine' });
    expect(auth.arc).toEqual({ result: 'pass' });
  });

  it('never lets an unknown keyword or shape through', () => {
    expect(toAuthResult('temperr')).toBe('temperror');
    expect(toAuthResult('bogus')).toBe('permerror');
    expect(toAuthResult(undefined)).toBe('permerror');
    expect(mapMailauthResult(null)).toEqual({ spf: { result: 'none', domain: '' }, dkim: [], dmarc: { result: 'permerror', domain: '', policy: null }, arc: { result: 'none' } });
  });
});

describe('authenticationResultsHeader', () => {
  it('says what the JSON says, one method per folded line, with no line break a client could inject', () => {
    const result = {
      dkim: { results: [row('neutral', { comment: 'no key' })] },
      spf: { domain: 'example.org', status: { result: 'pass' }, info: 'spf=pass smtp.mailfrom=example.org\r\nX-Injected: yes' },
      dmarc: false,
      arc: { status: { result: 'none' }, info: 'arc=none' },
    };
    const header = authenticationResultsHeader('mx.tempinbox.test', result, mapMailauthResult(result));
    expect(header).toBe(
      'Authentication-Results: mx.tempinbox.test;\r\n dkim=permerror header.d=example.org header.s=s1;\r\n spf=pass smtp.mailfrom=example.org X-Injected: yes;\r\n arc=none;\r\n dmarc=permerror (no single From domain)\r\n',
    );
  });

  it('has a line for every method when the checks could not run', () => {
    expect(authenticationResultsHeader('mx.test', undefined, unverified())).toBe(
      'Authentication-Results: mx.test;\r\n dkim=temperror;\r\n spf=temperror;\r\n arc=temperror;\r\n dmarc=temperror\r\n',
    );
  });
});
