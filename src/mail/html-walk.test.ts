import { readFileSync } from 'node:fs';
import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { MAX_WALKED_HTML_CHARS, walkSanitizedHtml } from './html-walk.js';
import { sanitizeMailHtml } from './sanitize-html.js';

type Event = ['open', string, Record<string, string>] | ['text', string] | ['close', string];

/** Adjacent text pieces as one: where a run of text is cut in pieces is not part of the walk's promise. */
function merged(events: Event[]): Event[] {
  const out: Event[] = [];
  for (const event of events) {
    const last = out.at(-1);
    if (event[0] === 'text' && last?.[0] === 'text') last[1] += event[1];
    else out.push(event[0] === 'open' ? ['open', event[1], { ...event[2] }] : [...event]);
  }
  return out;
}

function walked(html: string, stop?: () => boolean): Event[] {
  const events: Event[] = [];
  walkSanitizedHtml(
    html,
    {
      open: (name, attributes) => events.push(['open', name, { ...attributes }]),
      text: (text) => events.push(['text', text]),
      close: (name) => events.push(['close', name]),
    },
    stop,
  );
  return merged(events);
}

/** The same events from htmlparser2's full parser: the reference for HTML of any form. */
function parsed(html: string): Event[] {
  const events: Event[] = [];
  const parser = new Parser(
    {
      onopentag: (name, attributes) => events.push(['open', name, { ...attributes }]),
      ontext: (text) => events.push(['text', text]),
      onclosetag: (name) => events.push(['close', name]),
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return merged(events);
}

const fixture = <T>(path: string): T => JSON.parse(readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), 'utf8')) as T;
const htmlOf = (html: string | string[]): string => (Array.isArray(html) ? html.join('\n') : html);

const SAMPLES: Record<string, string> = {
  'entities in text and attributes': '<p title="a &quot;b&quot; &amp; c">x &lt;y&gt; &amp;amp; &nbsp;é &#128512; &copy</p>',
  'void elements and a self-closing slash': '<p>a<br>b<br/>c<img src="https://x.test/i.png" alt="i"><hr></p><div/>text',
  'implied end tags': '<table><tr><td>1<td>2</table><p>one<p>two<ul><li>a<li>b</ul>',
  'nesting and stray end tags': '<div><span><b>x</span></b></div></p></div>y',
  'upper-case names and boolean attributes': '<DIV STYLE="Display:None" Hidden>x</DIV><span hidden>y</span>',
  'a link with a query': '<a href="https://x.test/?a=1&amp;b=2&lt;">go &amp; see</a>',
  'comments and scripts': '<!-- note --><script>a<b</script><style>p{}</style><p>seen</p>',
  'unclosed elements at the end': '<div><p><span>open',
};

describe('walkSanitizedHtml', () => {
  const cases: [string, string][] = [
    ...Object.entries(SAMPLES),
    ...fixture<{ id: string; html: string | string[] }[]>('codes/html.json').map((m): [string, string] => [m.id, htmlOf(m.html)]),
    ...fixture<{ id: string; html: string }[]>('hidden-codes.json').map((m): [string, string] => [m.id, m.html]),
  ];

  it.each(cases)('reports what htmlparser2 reports for the sanitised HTML of %s', (_name, html) => {
    const clean = sanitizeMailHtml(html);
    expect(walked(clean)).toEqual(parsed(clean));
  });

  it('reports what htmlparser2 reports for the sanitised HTML of 500 random tag soups', () => {
    const pieces = [
      '<', '>', '&', '"', "'", ' ', '\n', 'text', 'кóд 482913', '&amp;', '&lt;', '&#x3c;', '&nbsp;', '&bogus;', '<p>', '</p>', '<br/>', '<td>', '</td>',
      '<tr>', '<table>', '</table>', '<li>', '<ul>', '</ul>', '<a href="https://x.test/?a=1&b=2">', '<a href=\'http://y.test/"q"\'>', '</a>',
      '<img src="https://x.test/i.png" alt="a>b">', '<!--c-->', '<script>x<y</script>', '<style>p{}</style>', '<textarea><b>t</textarea>',
      '<![CDATA[x]]>', '<svg><p>s</p></svg>', '<div hidden>', '<span style="display:none">', '<span style="Color: RGBA(0,0,0,0)">', '</span>',
      '<b>', '</b>', '<font color=red>', '<DIV title="&quot;x&quot;">', '</DIV>', '<pre>\n a\n</pre>', '<hr>', '<wbr>', '</br>', '<p/>',
    ];
    // A fixed generator (a linear congruential one), so a failure names a case that can be run again.
    let seed = 20261127;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 500; round += 1) {
      const html = Array.from({ length: 5 + Math.floor(next() * 40) }, () => pieces[Math.floor(next() * pieces.length)] ?? '').join('');
      const clean = sanitizeMailHtml(html);
      expect(walked(clean), html).toEqual(parsed(clean));
    }
  });

  it('closes every element it opens, in order, whatever the input', () => {
    for (const html of [...Object.values(SAMPLES), '<a><b><c></a>', '</x><y></y></y>', '<p', '<', 'a < b > c', '<1>x</1>']) {
      const stack: string[] = [];
      walkSanitizedHtml(html, {
        open: (name) => stack.push(name),
        text: () => undefined,
        close: (name) => expect(stack.pop()).toBe(name),
      });
      expect(stack, html).toEqual([]);
    }
  });

  it(`reads at most ${MAX_WALKED_HTML_CHARS} characters, and a tag cut there not at all`, () => {
    const head = `<p>${'x'.repeat(MAX_WALKED_HTML_CHARS - 10)}</p>`;
    const events = walked(`${head}<div>late</div><b>later</b>`);
    expect(events.at(-1)).toEqual(['close', 'p']);
    expect(events.some((event) => event[0] === 'open' && event[1] === 'b')).toBe(false);
  });

  it('stops when asked, closing what is open', () => {
    let texts = 0;
    const events = walked('<div><p>one</p><p>two</p><p>three</p></div>', () => (texts += 1) >= 1);
    expect(events).toEqual([['open', 'div', {}], ['open', 'p', {}], ['text', 'one'], ['close', 'p'], ['close', 'div']]);
  });
});
