import { describe, expect, it } from 'vitest';
import { newWebhookSecret, webhookSecretProblem } from './webhook-secret.js';

describe('webhook secrets', () => {
  it.each([
    'a'.repeat(16),
    'a'.repeat(128),
    '0123456789abcdef0123456789abcdef', // openssl rand -hex 16
    'q83v+/Zk1kM4n7Tt9xv0bE0PZ0yZ3c5dQk0ZJmT1r9w=', // openssl rand -base64 32
    'whsec_!"#$%&\'()*+,-./:;<=>?@[\\]^`{|}~',
  ])('accepts %j', (secret) => {
    expect(webhookSecretProblem(secret)).toBeNull();
  });

  it.each([
    ['a'.repeat(15), '16 to 128 characters'],
    ['a'.repeat(129), '16 to 128 characters'],
    ['', '16 to 128 characters'],
    ['correct horse battery staple', 'visible ASCII'],
    ['0123456789abcdef\n', 'visible ASCII'],
    ['geheimnis-schlüssel-1', 'visible ASCII'],
    ['0123456789abcdef\u0000', 'visible ASCII'],
  ])('refuses %j: %s', (secret, problem) => {
    expect(webhookSecretProblem(secret)).toContain(problem);
  });

  it('generates 32 random bytes as base64url, a secret it accepts', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => newWebhookSecret()));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      expect(webhookSecretProblem(secret)).toBeNull();
    }
  });
});
