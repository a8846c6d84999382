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
    ]);
    expect(links).toEqual([
      { href: 'https://example.org/confirm?t=1', text: 'Confirm' },
      { href: 'http://example.org/plain', text: 'http://example.org/plain' },
    ]);
  });

  it('is empty when the server sends no links (an older server) and bounded when it sends many', () => {
    expect(safeLinks(undefined)).toEqual([]);
    const many = Array.from({ length: MAX_LINKS_SHOWN + 20 }, (_, i) => ({ url: `https://example.org/${i}`, text: '' }));
    expect(safeLinks(many)).toHaveLength(MAX_LINKS_SHOWN);
  });
});
