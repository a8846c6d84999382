/** A From header split for display: the name people read, and the address. */
export interface Sender {
  name: string;
  address: string;
}

/** `"Alice Example" <alice@example.org>` → name and address; a bare address is both. */
export function parseSender(from: string): Sender {
  const match = /^\s*"?([^"<]*?)"?\s*<([^>]*)>\s*$/.exec(from);
  if (match === null) return { name: from.trim() || '(unknown sender)', address: from.trim() };
  const name = (match[1] ?? '').trim();
  const address = (match[2] ?? '').trim();
  return { name: name || address || '(unknown sender)', address };
}
