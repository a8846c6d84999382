import { describe, expect, it } from 'vitest';
import { boundHtmlNesting, MAX_HTML_NESTING_WORK } from './html-nesting-guard.js';
import { MAX_HTML_CHARS, MAX_SANITIZED_HTML_CHARS, sanitizeMailHtml } from './sanitize-html.js';

/** What no sanitised output may contain, however it was obtained. */
function expectInert(html: string): void {
  const lower = html.toLowerCase();
  for (const needle of ['<script', 'javascript:', 'vbscript:', '<iframe', '<form', '<meta', '<style', '<base', '<link', '<svg', '<math', '<object', '<embed', 'url(', 'expression(']) {
    expect(lower, needle).not.toContain(needle);
  }
  expect(lower).not.toMatch(/\son\w+\s*=/);
}

describe('sanitizeMailHtml: what is removed', () => {
  it.each([
    ['script element with its code', '<p>a</p><script>steal()</script><p>b</p>', '<p>a</p><p>b</p>'],
    ['script with odd casing and attributes', '<ScRiPt type="text/javascript" src="https://x/x.js">steal()</ScRiPt>ok', 'ok'],
    ['style element with its CSS', '<style>body{background:url(x)}</style><p>x</p>', '<p>x</p>'],
    ['noscript with its fallback', '<noscript>enable js</noscript>ok', 'ok'],
    ['title with its text', '<title>Page</title>ok', 'ok'],
    ['iframe with its fallback', '<iframe src="https://evil">fallback</iframe>ok', 'ok'],
    ['object with its fallback', '<object data="x.swf">fallback</object>ok', 'ok'],
    ['embed', '<embed src="x.swf">ok', 'ok'],
    ['svg with script inside', '<svg onload="steal()"><script>steal()</script><a href="https://x"><text>t</text></a></svg>ok', 'ok'],
    ['math with markup inside', '<math><mtext><style><img src=x onerror=steal()></style></mtext></math>ok', 'ok'],
    ['form tags, keeping their text', '<form action="https://evil"><label>Name</label><input name="n" value="v"><button>Send</button></form>', 'NameSend'],
    ['textarea and select with their values', '<textarea>secret</textarea><select><option>opt</option></select>ok', 'ok'],
    ['meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil">ok', 'ok'],
    ['base and link', '<base href="https://evil/"><link rel="stylesheet" href="https://evil/x.css">ok', 'ok'],
    ['comments and conditional comments', '<!--[if mso]><p>mso</p><![endif]--><!-- hidden -->ok', 'ok'],
    ['event handlers', '<div onclick="steal()" onmouseover="steal()" ONLOAD="steal()">x</div>', '<div>x</div>'],
    ['id, name and class', '<div id="app" class="btn" name="n">x</div>', '<div>x</div>'],
    ['body and html wrappers, keeping the content', '<html><body onload="steal()"><p>x</p></body></html>', '<p>x</p>'],
  ])('%s', (_label, input, expected) => {
    const output = sanitizeMailHtml(input);
    expect(output).toBe(expected);
    expectInert(output);
  });

  it.each([
    'javascript:steal()',
    'JaVaScRiPt:steal()',
    ' javascript:steal()',
    'java\tscript:steal()',
    'java\nscript:steal()',
    '\u0001javascript:steal()',
    'vbscript:msgbox(1)',
    'data:text/html;base64,PHNjcmlwdD4=',
    'file:///etc/passwd',
    'ftp://example.com/x',
    '/api/create?username=victim',
    '//evil.example/path',
    '#anchor',
    'relative/path.html',
    'https\u0001://evil.example',
  ])('drops the link target %j', (href) => {
    const output = sanitizeMailHtml(`<a href="${href}">x</a>`);
    expect(output).toBe('<a target="_blank" rel="noopener noreferrer">x</a>');
  });

  it('drops entity-encoded javascript: links', () => {
    const output = sanitizeMailHtml('<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;steal()">x</a><a href="jav&#x09;ascript:steal()">y</a>');
    expect(output).not.toContain('href');
    expectInert(output);
  });

  it.each([
    'javascript:steal()',
    'data:image/svg+xml;base64,PHN2Zz4=',
    'data:text/html,<script>steal()</script>',
    '/api/create',
    '//evil.example/x.png',
    'x.png',
  ])('drops the image source %j', (src) => {
    expect(sanitizeMailHtml(`<img src="${src}" alt="a">`)).toBe('<img alt="a" />');
  });

  it('drops srcset, which could smuggle another URL', () => {
    expect(sanitizeMailHtml('<img src="https://x/a.png" srcset="javascript:steal() 1x">')).toBe('<img src="https://x/a.png" />');
  });

  it.each([
    ['url()', 'background-image: url(https://evil/t.png)'],
    ['url() in an allowed property', 'border: 1px solid url(x)'],
    ['expression()', 'width: expression(steal())'],
    ['javascript:', 'color: javascript:steal()'],
    ['CSS escapes', 'color: r\\65 d'],
    ['escaped url', 'font-family: \\75 rl(x)'],
    ['image-set()', 'border-color: image-set("x.png" 1x)'],
    ['var()', 'color: var(--x)'],
    ['-moz-binding', '-moz-binding: url(x.xml#xss)'],
    ['behavior', 'behavior: url(x.htc)'],
    ['position', 'position: fixed; top: 0'],
    ['content', 'content: "x"'],
    ['background shorthand', 'background: red'],
    ['border-image', 'border-image: linear-gradient(red, blue) 1'],
  ])('drops a style declaration with %s', (_label, style) => {
    const output = sanitizeMailHtml(`<div style="${style.replace(/"/g, '&quot;')}">x</div>`);
    expect(output).toBe('<div>x</div>');
  });

  it.each([
    ['comments', 'color: red/**/'],
    ['an @import rule', 'color: red; @import "x.css"'],
    ['a second rule', 'color: red} body { background: url(x)'],
  ])('reduces a style attribute with %s to its plain declaration', (_label, style) => {
    expect(sanitizeMailHtml(`<div style="${style.replace(/"/g, '&quot;')}">x</div>`)).toBe('<div style="color:red">x</div>');
  });

  it('keeps the harmless declarations of a mixed style attribute', () => {
    const output = sanitizeMailHtml('<p style="color: red; background-image: url(x); position: absolute; font-size: 12px">x</p>');
    expect(output).toBe('<p style="color:red;font-size:12px">x</p>');
  });
});

describe('sanitizeMailHtml: what is kept', () => {
  it('keeps mail formatting tags', () => {
    const input = '<h1>T</h1><p><b>b</b> <i>i</i> <u>u</u> <strong>s</strong> <em>e</em> <code>c</code></p>'
      + '<ul><li>one</li></ul><ol start="3"><li>two</li></ol><blockquote>q</blockquote><pre>p</pre>'
      + '<center>c</center><font color="red" face="Arial" size="2">f</font><hr /><br />';
    expect(sanitizeMailHtml(input)).toBe(input);
  });

  it('keeps table layout attributes', () => {
    const input = '<table width="600" border="0" cellpadding="4" cellspacing="0" align="center" bgcolor="#ffffff">'
      + '<tbody><tr valign="top"><td colspan="2" rowspan="1" width="50%" height="20" align="left" bgcolor="#eee">c</td></tr></tbody></table>';
    expect(sanitizeMailHtml(input)).toBe(input);
  });

  it('opens links in a new tab without an opener, whatever the message asked', () => {
    expect(sanitizeMailHtml('<a href="https://example.com/confirm?token=abc&amp;x=1" target="_self" rel="opener" title="Confirm">Confirm</a>'))
      .toBe('<a href="https://example.com/confirm?token=abc&amp;x=1" target="_blank" rel="noopener noreferrer" title="Confirm">Confirm</a>');
    expect(sanitizeMailHtml('<a href="mailto:someone@example.com">mail</a>'))
      .toBe('<a href="mailto:someone@example.com" target="_blank" rel="noopener noreferrer">mail</a>');
    expect(sanitizeMailHtml('<a href="HTTP://EXAMPLE.COM/">up</a>'))
      .toBe('<a href="HTTP://EXAMPLE.COM/" target="_blank" rel="noopener noreferrer">up</a>');
  });

  it.each([
    'https://example.com/logo.png',
    'http://example.com/logo.png',
    'cid:logo@example.com',
    'data:image/png;base64,iVBORw0KGgo=',
    'data:image/jpeg;base64,/9j/4AAQ',
    'data:image/gif;base64,R0lGODlh',
  ])('keeps the image source %j', (src) => {
    expect(sanitizeMailHtml(`<img src="${src}" alt="logo" width="100" height="50" border="0">`))
      .toBe(`<img src="${src}" alt="logo" width="100" height="50" border="0" />`);
  });

  it('keeps the listed styles with ordinary values', () => {
    const style = "color:#333;background-color:rgb(255, 255, 255);font-family:'Segoe UI', Arial, sans-serif;"
      + 'font-size:14px;font-weight:bold;text-align:center;text-decoration:none;padding:0 4px;margin:0 auto;'
      + 'border:1px solid #ccc;border-collapse:collapse;width:100%;height:auto;max-width:600px;display:block;'
      + 'line-height:1.5;vertical-align:top;white-space:nowrap;padding-left:calc(2px + 1em) !important';
    expect(sanitizeMailHtml(`<div style="${style}">x</div>`)).toBe(`<div style="${style}">x</div>`);
  });

  it('keeps non-ASCII font names', () => {
    expect(sanitizeMailHtml('<p style="font-family:微软雅黑, Arial">x</p>')).toBe('<p style="font-family:微软雅黑, Arial">x</p>');
  });

  it('escapes text and keeps it', () => {
    expect(sanitizeMailHtml('<p>1 &lt; 2 &amp; "quotes" &gt; 0</p>')).toBe('<p>1 &lt; 2 &amp; "quotes" &gt; 0</p>');
  });
});

describe('sanitizeMailHtml: bounds', () => {
  it('sanitises at most MAX_HTML_CHARS of input', () => {
    const output = sanitizeMailHtml(`<p>${'a'.repeat(MAX_HTML_CHARS + 1000)}</p>`);
    expect(output.length).toBeLessThanOrEqual(MAX_HTML_CHARS + '</p>'.length);
  });

  it('caps output that outgrows its input, cutting only between tags', () => {
    const output = sanitizeMailHtml('<a></a>'.repeat(MAX_HTML_CHARS / 7));
    expect(output.length).toBeLessThanOrEqual(MAX_SANITIZED_HTML_CHARS);
    expect(output.endsWith('</a>')).toBe(true);
  });

  it('flattens markup nested deeper than the limit, keeping its text', () => {
    const output = sanitizeMailHtml(`${'<div>'.repeat(300)}deep text${'</div>'.repeat(300)}`);
    expect(output).toContain('deep text');
    expect(output.split('<div>').length - 1).toBeLessThanOrEqual(100);
  });

  it.each([
    ['unclosed inline tags', '<b>'.repeat(400_000)],
    ['unclosed blocks', '<div>'.repeat(250_000)],
    ['open tags then unmatched end tags', `${'<i>'.repeat(5000)}${'</q>'.repeat(250_000)}`],
    ['nested tables', '<table>'.repeat(150_000)],
  ])('stays fast on %s', (_label, html) => {
    const started = performance.now();
    expectInert(sanitizeMailHtml(html));
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it.each([
    ['a link', (blanks: string) => `<a href="https://x.test/${blanks}x">go</a>`],
    ['an image', (blanks: string) => `<img src="https://x.test/${blanks}x">`],
  ])('reads the URL of %s with a long run of spaces inside it in linear time', (_label, element) => {
    const cpuMs = (): number => {
      const usage = process.threadCpuUsage();
      return (usage.user + usage.system) / 1000;
    };
    const started = cpuMs();
    const output = sanitizeMailHtml(element(' '.repeat(256 * 1024)));
    // Linear, a few ms; trimming such a URL with a `[…]+$` pattern costs tens of seconds.
    expect(cpuMs() - started).toBeLessThan(1000);
    expect(output).toContain('https://x.test/');
  });
});

describe('boundHtmlNesting', () => {
  it('leaves ordinary, well-nested HTML alone', () => {
    const html = '<table><tr><td><p>a<p>b<ul><li>1<li>2</ul></td><td>c</td></tr><tr><td>d</table>'.repeat(2000);
    expect(boundHtmlNesting(html)).toBe(html);
  });

  it('cuts before the tag where the modelled parser work passes the budget', () => {
    const html = '<b>'.repeat(100);
    // Work is 1 + 2 + … + n for n nested tags: 10 tags cost 55.
    expect(boundHtmlNesting(html, 55)).toBe('<b>'.repeat(10));
    expect(boundHtmlNesting('<b>'.repeat(1_000_000)).length).toBeLessThan(3 * Math.sqrt(2 * MAX_HTML_NESTING_WORK) + 3);
  });

  it('counts void elements and closed elements as cheap', () => {
    const html = '<br><img src="x"><span>a</span>'.repeat(100_000);
    expect(boundHtmlNesting(html)).toBe(html);
  });
});
