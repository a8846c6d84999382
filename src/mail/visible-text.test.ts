import { describe, expect, it } from 'vitest';
import { sanitizeMailHtml } from './sanitize-html.js';
import { visibleText } from './visible-text.js';

const BIG = 32 * 1024;

/** As on ingest: the text of the sanitised HTML. */
const textOf = (html: string, maxChars = BIG): string => visibleText(sanitizeMailHtml(html), maxChars);

describe('visibleText: layout', () => {
  it('puts blocks on their own lines, paragraphs a blank line apart, and table cells of a row side by side', () => {
    const html = '<h1>Welcome</h1><p>Your code:</p><table><tr><td>7</td><td>3</td><td>0</td></tr><tr><td>Valid 10 minutes</td></tr></table><div>Bye</div><div>Team</div>';
    expect(textOf(html)).toBe('Welcome\n\nYour code:\n\n7 3 0\nValid 10 minutes\n\nBye\nTeam');
  });

  it('collapses white space as a browser does, keeps non-breaking spaces, and decodes entities', () => {
    expect(textOf('<p>  Your\n\t code  is&nbsp;<b>482&#160;913</b> &amp; more </p>')).toBe('Your code is\u00a0482\u00a0913 & more');
  });

  it('breaks lines at <br>, keeps the lines and spaces of <pre>', () => {
    expect(textOf('one<br>two<pre>a  b\n  c</pre>three')).toBe('one\ntwo\n\na  b\n  c\n\nthree');
  });

  it('gives nothing for images (their alt text is not seen) and keeps link text without the URL', () => {
    expect(textOf('<p><img src="https://x.test/logo.png" alt="Logo 482913"><a href="https://x.test/v?c=111111">Verify</a></p>')).toBe('Verify');
  });

  it('leaves out hidden content without breaking the lines around it', () => {
    const html = '<p>Code:</p><p style="display:none">111111</p><div hidden>x</div><p>222 <span style="font-size:0">333</span>444</p>';
    expect(textOf(html)).toBe('Code:\n\n222 444');
  });
});

describe('visibleText: bounds', () => {
  it('returns at most maxChars characters', () => {
    const text = textOf(`<p>${'word '.repeat(10_000)}</p>`.repeat(5), 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text.startsWith('word word')).toBe(true);
  });

  it('counts line breaks against the bound', () => {
    expect(textOf('<p>x</p>'.repeat(10_000), 100).length).toBeLessThanOrEqual(100);
  });
});
