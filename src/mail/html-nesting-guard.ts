/**
 * htmlparser2 (under sanitize-html and html-to-text) keeps its open-element stack with
 * `unshift` and looks up end tags with `indexOf`, so each tag costs time in proportion to
 * how many elements are open: 1 MB of `<b>` (never closed) is hundreds of thousands of
 * nested elements and minutes of CPU. This linear pre-pass models that stack cheaply and
 * cuts the HTML where the modelled cost passes a budget; real mail stays far below it.
 */

/** Stack-depth units of parser work allowed (≈ tags × open elements), ~100 ms at worst. */
export const MAX_HTML_NESTING_WORK = 100_000_000;

const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)/g;

/** Elements that never stay open. */
const VOID = new Set([
  'area', 'base', 'basefont', 'bgsound', 'br', 'col', 'embed', 'frame', 'hr', 'img', 'input',
  'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr',
]);

/** Elements that close an open sibling of these names, as HTML parsers do implicitly. */
const CLOSES_SIBLINGS = new Map<string, ReadonlySet<string>>([
  ['p', new Set(['p'])],
  ['li', new Set(['li'])],
  ['dt', new Set(['dt', 'dd'])],
  ['dd', new Set(['dt', 'dd'])],
  ['td', new Set(['td', 'th'])],
  ['th', new Set(['td', 'th'])],
  ['tr', new Set(['tr', 'td', 'th'])],
  ['option', new Set(['option'])],
]);

/** An open-element stack with O(1) "is this name open?" so that modelling stays linear. */
class OpenElements {
  private readonly names: string[] = [];
  private readonly counts = new Map<string, number>();

  get depth(): number {
    return this.names.length;
  }

  push(name: string): void {
    this.names.push(name);
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  pop(): string | undefined {
    const name = this.names.pop();
    if (name !== undefined) this.counts.set(name, (this.counts.get(name) ?? 1) - 1);
    return name;
  }

  top(): string | undefined {
    return this.names[this.names.length - 1];
  }

  /** An end tag: pops up to and including `name` if it is open; ignored otherwise. */
  close(name: string): void {
    if ((this.counts.get(name) ?? 0) === 0) return;
    while (this.pop() !== name) {
      // Each element is popped once, so the loops add up to linear time.
    }
  }
}

/**
 * `html` cut before the tag at which the modelled parser work passes `budget`. An
 * over-estimate by design (it does not know raw-text elements or every implied end tag),
 * which errs on the side of cutting pathological markup.
 */
export function boundHtmlNesting(html: string, budget: number = MAX_HTML_NESTING_WORK): string {
  const open = new OpenElements();
  let work = 0;
  for (const match of html.matchAll(TAG)) {
    work += open.depth + 1;
    if (work > budget) return html.slice(0, match.index);
    const name = (match[2] ?? '').toLowerCase();
    if (match[1] === '/') {
      open.close(name);
      continue;
    }
    if (VOID.has(name)) continue;
    const siblings = CLOSES_SIBLINGS.get(name);
    while (siblings !== undefined && siblings.has(open.top() ?? '')) open.pop();
    open.push(name);
  }
  return html;
}
