import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/api-error.js';
import { errorText } from '../api/error-text.js';
import { deliveriesFingerprint, deliveryKind, deliveryOutcome, webhookErrorText, webhookInputProblem } from './webhook-text.js';

describe('webhookInputProblem', () => {
  it('lets a public-looking http(s) URL through, with or without a secret of 16 to 128 characters', () => {
    expect(webhookInputProblem('https://hooks.example.com/in', '')).toBeNull();
    expect(webhookInputProblem('  http://hooks.example.com:8443/in?x=1 ', 'a'.repeat(16))).toBeNull();
    expect(webhookInputProblem('https://hooks.example.com/in', 'a'.repeat(128))).toBeNull();
    // Whether the host is public is the server's to judge (it resolves the name).
    expect(webhookInputProblem('http://127.0.0.1/in', '')).toBeNull();
  });

  it('says in words what is missing or wrong', () => {
    expect(webhookInputProblem('   ', '')).toBe('Enter the URL the messages should be sent to.');
    expect(webhookInputProblem('hooks.example.com/in', '')).toMatch(/starts with https:\/\//);
    expect(webhookInputProblem('ftp://hooks.example.com/in', '')).toMatch(/starts with https:\/\//);
    expect(webhookInputProblem('https://user:pw@hooks.example.com/in', '')).toMatch(/user name and password/);
    expect(webhookInputProblem(`https://hooks.example.com/${'a'.repeat(2048)}`, '')).toMatch(/at most 2048/);
    expect(webhookInputProblem('https://hooks.example.com/in', 'a'.repeat(15))).toMatch(/16 to 128 characters/);
    expect(webhookInputProblem('https://hooks.example.com/in', 'a'.repeat(129))).toMatch(/16 to 128 characters/);
    expect(webhookInputProblem('https://hooks.example.com/in', 'a secret with spaces')).toMatch(/no spaces/);
    expect(webhookInputProblem('https://hooks.example.com/in', 'geheimnis-grüße-1234')).toMatch(/ASCII/);
  });
});

describe('webhookErrorText', () => {
  it('words the codes whose page-wide sentence would mislead here, and leaves the rest to errorText', () => {
    expect(webhookErrorText('premium_required')).toMatch(/^Webhooks need Premium/);
    expect(webhookErrorText('invalid_request')).toMatch(/http:\/\/ or https:\/\//);
    expect(webhookErrorText('rate_limited')).toBeUndefined();
    expect(webhookErrorText('webhook_url_forbidden')).toBeUndefined();
    expect(errorText(new ApiError('webhook_url_forbidden', 400))).toMatch(/private, local or reserved address/);
    expect(errorText(new ApiError('webhook_not_found', 404))).toBe('This inbox has no webhook any more. Set one first.');
  });
});

describe('deliveryOutcome and deliveryKind', () => {
  it('tells a 2xx from another status and from no answer', () => {
    expect(deliveryOutcome({ status: 200, error: null })).toEqual({ text: 'Delivered (HTTP 200)', ok: true });
    expect(deliveryOutcome({ status: 204, error: null })).toEqual({ text: 'Delivered (HTTP 204)', ok: true });
    expect(deliveryOutcome({ status: 500, error: null })).toEqual({ text: 'Refused: HTTP 500', ok: false });
    expect(deliveryOutcome({ status: 302, error: null })).toEqual({ text: 'Refused: HTTP 302', ok: false });
    expect(deliveryOutcome({ status: null, error: 'connection refused' })).toEqual({ text: 'Failed: connection refused', ok: false });
    expect(deliveryOutcome({ status: null, error: null })).toEqual({ text: 'No answer', ok: false });
    expect(deliveryKind({ message_id: null })).toBe('Test');
    expect(deliveryKind({ message_id: 'AAAAAAAAAAAAAAAAAAAAAB' })).toBe('Message');
  });
});

describe('deliveriesFingerprint', () => {
  it('changes with a new attempt, of a new delivery or of the same one', () => {
    const first = { id: 'd1', attempt: 1, at: '2026-11-27T12:00:00.000Z' };
    expect(deliveriesFingerprint([])).toBe('');
    const one = deliveriesFingerprint([first]);
    expect(deliveriesFingerprint([first])).toBe(one);
    expect(deliveriesFingerprint([{ ...first, attempt: 2, at: '2026-11-27T12:00:10.000Z' }, first])).not.toBe(one);
    expect(deliveriesFingerprint([{ id: 'd2', attempt: 1, at: '2026-11-27T12:00:05.000Z' }, first])).not.toBe(one);
  });
});
