/**
 * How the `to`, `from` and `subject` filters of a check match (docs/api.md, check: "Filters"):
 * a filter matches when its folded text is a substring of the field's match key, the folded
 * first MATCH_KEY_CHARS of the field, stored with the message when it is received. One fold
 * for the keys and the filters, on every backend, so SQLite and PostgreSQL (and the memory
 * store) match alike, and a filter only ever searches bounded text.
 *
 * Dependency-free: the SQLite writer thread imports it by its `.ts` name (sqlite-delivery.ts).
 */

/**
 * Characters (UTF-16 code units, a surrogate pair never split) of a stored match key: real
 * subjects and From headers are far shorter, and a filter never searches more per field. A
 * substring search with a 320-character near miss through 512 characters costs about 1.5 µs
 * (SQLite's instr; 5 µs through 1,024, 10 µs through the 2,000 a From may keep): a filtered
 * read of 1,000 messages costs a few milliseconds, where LIKE through the whole fields cost
 * 600 ms (docs/benchmarks.md "Filters").
 */
export const MATCH_KEY_CHARS = 512;

/**
 * Characters of a field folded for its key: folding may merge up to three characters into
 * one (NFKC composes Hangul jamo), so four times the key's length always yields a full key,
 * and the fold of a 16 KiB header value never runs.
 */
export const FOLD_INPUT_CHARS = MATCH_KEY_CHARS * 4;

/**
 * Unicode case folding for matching, with compatibility forms merged: NFKC (ﬁ is fi, ＡＢＣ
 * is ABC, e + U+0301 is é), then lower, upper and lower case again, so that every case form
 * meets: ß, ẞ and SS fold to ss, as in Unicode's full case folding; final ς folds to σ (JS
 * lower-cases Σ by its position in the string, which a substring must not depend on); İ and
 * ı fold to i, like I (a Turkish search finds IŞIK as ışık, where Unicode's default folding
 * keeps ı apart); NFKC again puts back what case mapping took apart (ǰ). JS has no casefold
 * of its own; this is the one fold of the product.
 */
export function foldForMatch(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()
    .replaceAll('ς', 'σ')
    .replaceAll('i\u0307', 'i')
    .normalize('NFKC');
}

/** The stored match key of a field: its folded first MATCH_KEY_CHARS characters. */
export function matchKey(text: string): string {
  return cutUnits(foldForMatch(cutUnits(text, FOLD_INPUT_CHARS)), MATCH_KEY_CHARS);
}

/**
 * The key a `from` filter searches: the From header's and the envelope sender's keys, with
 * a line feed between them, which no filter contains, so a filter matches within one of them.
 */
export function fromMatchKey(fromHeader: string, envelopeFrom: string): string {
  return `${matchKey(fromHeader)}\n${matchKey(envelopeFrom)}`;
}

/** Whether `text` has a control character (U+0000–U+001F, U+007F): never in a filter (docs/api.md, check). */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit === 0x7f) return true;
  }
  return false;
}

/** The first `units` UTF-16 code units of `text`, one less when that would split a surrogate pair. */
function cutUnits(text: string, units: number): string {
  if (text.length <= units) return text;
  const last = text.charCodeAt(units - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? units - 1 : units);
}

/** A listing's filters folded for matching, '' where there is none: what a store searches its keys for. */
export interface FoldedFilter {
  to: string;
  from: string;
  subject: string;
}

/** Folds each filter of a listing (foldForMatch); an absent filter is '', which every key contains. */
export function foldFilter(filter: { to?: string; from?: string; subject?: string } | undefined): FoldedFilter {
  return { to: foldForMatch(filter?.to ?? ''), from: foldForMatch(filter?.from ?? ''), subject: foldForMatch(filter?.subject ?? '') };
}
