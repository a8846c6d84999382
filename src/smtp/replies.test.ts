import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CODES, type ErrorCode } from '../domain/errors.js';
import { StoreFailureError, StoreFullError, StoreUnavailableError } from '../ports/mail-store.js';
import { formatReply, logLevelFor, replyForError, SMTP_REPLIES } from './replies.js';

describe('SMTP reply table', () => {
  it.each(ERROR_CODES)('%s has a failure reply whose enhanced class matches its code', (code) => {
    const reply = SMTP_REPLIES[code];
    expect(reply.code).toBeGreaterThanOrEqual(400);
    expect(reply.code).toBeLessThan(600);
    // RFC 3463 §2: the class digit of the enhanced code agrees with the basic reply.
    expect(reply.enhanced).toMatch(/^[45]\.\d{1,3}\.\d{1,3}$/);
    expect(reply.enhanced[0]).toBe(String(reply.code)[0]);
    // Control characters would split the reply line.
    expect(reply.text).toMatch(/^[\x20-\x7e]+$/);
  });

  const contract: Array<[ErrorCode, string]> = [
    ['invalid_domain', '550 5.7.1'],
    ['inbox_not_found', '550 5.1.1'],
    ['inbox_expired', '550 5.1.1'],
    ['inbox_full', '452 4.2.2'],
    ['too_many_recipients', '452 4.5.3'],
    ['payload_too_large', '552 5.3.4'],
    ['unavailable', '451 4.3.0'],
    ['storage_full', '452 4.3.1'],
    ['internal_error', '451 4.3.0'],
    ['invalid_request', '501 5.1.3'],
    ['username_invalid', '501 5.1.3'],
  ];
  it.each(contract)('%s is answered %s (docs/api.md "SMTP")', (code, wire) => {
    expect(formatReply(SMTP_REPLIES[code])).toMatch(new RegExp(`^${wire} `));
  });

  it('rate limiting is transient and policy-classed', () => {
    expect(SMTP_REPLIES.rate_limited.code).toBeGreaterThanOrEqual(400);
    expect(SMTP_REPLIES.rate_limited.code).toBeLessThan(500);
    expect(SMTP_REPLIES.rate_limited.enhanced).toMatch(/^4\.7\./);
  });
});

describe('replyForError', () => {
  it('maps an AppError by its code, not by its message', () => {
    const reply = replyForError(new AppError('invalid_domain', 'internal detail: db row 42'));
    expect(formatReply(reply)).toBe('550 5.7.1 Relay access denied');
  });

  it('answers a store outage with 451 4.3.0', () => {
    expect(formatReply(replyForError(new StoreUnavailableError('connect ECONNREFUSED 10.0.0.5:5432')))).toMatch(
      /^451 4\.3\.0 /,
    );
  });

  it('answers a full disk with 452 4.3.1 and a failing query with 451 4.3.0, logged as an error', () => {
    expect(formatReply(replyForError(new StoreFullError('insertMessage failed: database or disk is full')))).toMatch(/^452 4\.3\.1 /);
    const bug = new StoreFailureError('insertMessage failed: no such table: messages');
    expect(formatReply(replyForError(bug))).toMatch(/^451 4\.3\.0 /);
    expect(logLevelFor(bug)).toBe('error');
    expect(logLevelFor(new StoreUnavailableError('connect ECONNREFUSED'))).toBe('warn');
    expect(logLevelFor(new StoreFullError('full'))).toBe('warn');
  });

  it.each([new Error('secret stack detail'), new TypeError('x is undefined'), 'a string', undefined, null, 42, {}])(
    'answers anything else (%s) with 451 4.3.0 and a fixed text',
    (thrown) => {
      const reply = replyForError(thrown);
      expect(reply.code).toBe(451);
      expect(reply.enhanced).toBe('4.3.0');
      expect(reply.text).not.toMatch(/secret|undefined/);
    },
  );
});
