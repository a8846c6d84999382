import { describe, expect, it } from 'vitest';
import { MAX_LINKS_SHOWN, safeLinks } from './safe-links.js';

describe('safeLinks', () => {
  it('keeps only absolute http(s) links, once each, with the URL as text when there is none', () => {
    const links = safeLinks([
      { url: 'https://example.org/confirm?t=1', text: ' Confirm ' },
      { url: 'javascript:alert(1)', text: 'evil' },
      { url: 'JavaScript:alert(1)', text: 'evil' },
      { url: 'data:text/html,<script>x</script>', text: 'data' },
      { url: '/api/create', text: 'relative' },
      { url: 'mailto:a@example.org', text: 'mail' },
      { url: 'http://example.org/plain', text: '' },
      { url: 'https://example.org/confirm?t=1', text: 'again' },
    ], 'https://tempinbox.test');
    expect(links).toEqual([
      { href: 'https://example.org/confirm?t=1', text: 'Confirm', own: false },
      { href: 'http://example.org/plain', text: 'http://example.org/plain', own: false },
    ]);
  });

  it('marks every link into the page\'s own origin, however it is spelt, and only those', () => {
    const links = safeLinks([
      { url: 'https://tempinbox.test/api/create?username=x', text: 'Claim' },
      { url: 'HTTPS://TempInbox.Test:443/api/inbox/x', text: '' },
      { url: 'https://tempinbox.test./api/create', text: 'trailing dot' },
      { url: 'http://tempinbox.test/api/create', text: 'other scheme' },
      { url: 'https://tempinbox.test:8443/api/create', text: 'other port' },
      { url: 'https://evil.test/https://tempinbox.test/', text: 'elsewhere' },
      { url: 'https://tempinbox.test.evil.test/', text: 'look-alike' },
      { url: 'https://tempinbox.test@evil.test/', text: 'user info' },
    ], 'https://tempinbox.test');
    expect(links.map((link) => [link.href, link.own])).toEqual([
      ['https://tempinbox.test/api/create?username=x', true],
      ['https://tempinbox.test/api/inbox/x', true],
      ['https://tempinbox.test./api/create', false],
      ['http://tempinbox.test/api/create', false],
      ['https://tempinbox.test:8443/api/create', false],
      ['https://evil.test/https://tempinbox.test/', false],
      ['https://tempinbox.test.evil.test/', false],
      ['https://tempinbox.test@evil.test/', false],
    ]);
  });

  it('is empty when the server sends no links (an older server) and bounded when it sends many', () => {
    expect(safeLinks(undefined, 'https://tempinbox.test')).toEqual([]);
    const many = Array.from({ length: MAX_LINKS_SHOWN + 20 }, (_, i) => ({ url: `https://example.org/${i}`, text: '' }));
    expect(safeLinks(many, 'https://tempinbox.test')).toHaveLength(MAX_LINKS_SHOWN);
  });
});
