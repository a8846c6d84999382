import { describe, expect, it } from 'vitest';
import { parseRecipient, splitInboxParam } from './address.js';

describe('recipient addresses', () => {
  it('splits plus-addressing and lowercases', () => {
    expect(parseRecipient('John.Doe+News@TempInbox.TEST')).toEqual({ username: 'john.doe', tag: 'News', domain: 'tempinbox.test' });
  });

  it('drops a trailing dot of the domain', () => {
    expect(parseRecipient('a@example.org.')?.domain).toBe('example.org');
  });

  it.each(['', 'plain', '@domain', 'user@', 'user@bad_domain!', `${'a'.repeat(260)}@x.org`])('rejects %j', (address) => {
    expect(parseRecipient(address)).toBeNull();
  });

  it('turns an internationalised domain into its ASCII (punycode) form', () => {
    expect(parseRecipient('a@Bücher.test')?.domain).toBe('xn--bcher-kva.test');
  });

  it('uses the last @ (quoted local parts may contain one)', () => {
    expect(parseRecipient('"a@b"@example.org')?.domain).toBe('example.org');
  });
});

describe('check parameter', () => {
  it('takes a username', () => {
    expect(splitInboxParam('Alice')).toEqual({ username: 'alice', domain: null });
  });

  it('takes a full address', () => {
    expect(splitInboxParam('alice+x@Example.org')).toEqual({ username: 'alice', domain: 'example.org' });
  });

  it('yields an empty (invalid) username for a broken address', () => {
    expect(splitInboxParam('alice@')).toEqual({ username: '', domain: null });
  });
});
