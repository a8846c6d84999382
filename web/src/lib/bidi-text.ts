/**
 * Directional formatting characters in mail-derived text (Unicode Bidirectional Algorithm,
 * UAX #9 §2.1-2.2): embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069).
 * They reorder what follows them: a sender name ending in U+202E (RIGHT-TO-LEFT OVERRIDE)
 * draws the real address backwards after it, and `Invoice U+202Efdp.exe` reads `exe.pdf`.
 * The page never lets one act: it shows each as a visible marker, inside an element isolated
 * from its neighbours. The marks U+200E, U+200F and U+061C are left in: they move no strong
 * character, only neutral ones next to them, and the isolation ends their reach at the
 * string's edge; names written in Hebrew or Arabic use them.
 */
const CONTROL_NAMES: Readonly<Record<string, string>> = {
  '\u202a': 'LRE',
  '\u202b': 'RLE',
  '\u202c': 'PDF',
  '\u202d': 'LRO',
  '\u202e': 'RLO',
  '\u2066': 'LRI',
  '\u2067': 'RLI',
  '\u2068': 'FSI',
  '\u2069': 'PDI',
};

/** Every directional control of CONTROL_NAMES, for splitting and replacing. */
const CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

/** A piece of text, or one control to show in its place. */
export type BidiPart = { kind: 'text'; text: string } | { kind: 'control'; name: string; codePoint: string };

/** `text` cut at its directional controls: the text between them, and each control by name. */
export function splitBidiControls(text: string): BidiPart[] {
  const parts: BidiPart[] = [];
  let from = 0;
  for (const match of text.matchAll(CONTROLS)) {
    if (match.index > from) parts.push({ kind: 'text', text: text.slice(from, match.index) });
    const control = match[0];
    const codePoint = `U+${(control.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
    parts.push({ kind: 'control', name: CONTROL_NAMES[control] ?? codePoint, codePoint });
    from = match.index + control.length;
  }
  if (from < text.length || parts.length === 0) parts.push({ kind: 'text', text: text.slice(from) });
  return parts;
}

/**
 * `text` for places that hold plain text only (a title, an attribute, the live region): each
 * control written as its name in brackets, `[RLO]`, so it is seen and does nothing.
 */
export function showBidiControls(text: string): string {
  return text.replace(CONTROLS, (control) => `[${CONTROL_NAMES[control] ?? ''}]`);
}

/** `text` without its directional controls: for a download's file name, where no marker belongs. */
export function withoutBidiControls(text: string): string {
  return text.replace(CONTROLS, '');
}
