import { describe, expect, it } from 'vitest';
import { generateUsername, isReservedUsername, isValidUsername, normalizeUsername } from './username.js';

describe('usernames', () => {
  it.each(['abc', 'a.b', 'a_b-c', 'john.doe99', 'a'.repeat(32), '0ab'])('accepts %s', (name) => {
    expect(isValidUsername(name)).toBe(true);
  });

  it.each(['ab', 'a'.repeat(33), '.abc', 'abc.', '-abc', 'abc_', 'a..b', 'ab c', 'ABC', 'ab+c', 'ab@c', 'é-abc', ''])(
    'rejects %j',
    (name) => {
      expect(isValidUsername(name)).toBe(false);
    },
  );

  it('normalises case and surrounding space', () => {
    expect(normalizeUsername('  John.Doe ')).toBe('john.doe');
  });

  it('reserves the role accounts', () => {
    for (const name of ['postmaster', 'abuse', 'hostmaster', 'webmaster', 'security', 'noc', 'mailer-daemon', 'root', 'admin', 'administrator']) {
      expect(isReservedUsername(name)).toBe(true);
    }
    expect(isReservedUsername('alice')).toBe(false);
  });

  it('generates 10 chars of [a-z][a-z0-9]{9} that are valid and distinct', () => {
    const names = new Set(Array.from({ length: 2000 }, () => generateUsername()));
    expect(names.size).toBe(2000);
    for (const name of names) {
      expect(name).toMatch(/^[a-z][a-z0-9]{9}$/);
      expect(isValidUsername(name)).toBe(true);
    }
  });

  it('draws every character from the RNG it is given', () => {
    expect(generateUsername(() => 0)).toBe('aaaaaaaaaa');
    expect(generateUsername((max) => max - 1)).toBe('z999999999');
  });
});
