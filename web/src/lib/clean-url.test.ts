import { describe, expect, it } from 'vitest';
import { cleanUrl } from './clean-url.js';

describe('cleanUrl', () => {
  it('reads a URL as a browser does before the scheme', () => {
    expect(cleanUrl(' \u0000\tjava\nscript:alert(1)\r ')).toBe('javascript:alert(1)');
    expect(cleanUrl('https://a.test/ x ')).toBe('https://a.test/ x');
    expect(cleanUrl('   ')).toBe('');
  });

  it('takes linear time on a long run of spaces that is not at the end', () => {
    // 256 KiB of spaces then a letter: an anchored `[\u0000-\u0020]+$` retries from each space.
    const hostile = `https://a.test/${' '.repeat(256 * 1024)}x`;
    const started = performance.now();
    expect(cleanUrl(hostile)).toBe(hostile);
    expect(performance.now() - started).toBeLessThan(50);
  });
});
