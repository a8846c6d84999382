import type { Message } from '../api/api-types.js';

/** Newer messages (newest first, as the API sends them) on top of the known ones, without duplicates. */
export function mergeMessages(known: Message[], incoming: Message[]): Message[] {
  if (incoming.length === 0) return known;
  const ids = new Set(incoming.map((message) => message.id));
  return [...incoming, ...known.filter((message) => !ids.has(message.id))];
}
