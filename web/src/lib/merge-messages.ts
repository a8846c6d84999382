import type { Message } from '@tempinbox/client';

/**
 * Known and incoming messages in one list, newest first, without duplicates. A message never
 * changes once received, so a known copy is kept (it may be the whole one, loaded after a
 * truncated listing). Sorted by receive time because the stream and a catch-up check can
 * answer in either order; equal times keep the incoming one first (the sort is stable).
 */
export function mergeMessages(known: Message[], incoming: Message[]): Message[] {
  const ids = new Set(known.map((message) => message.id));
  const fresh = incoming.filter((message) => !ids.has(message.id));
  if (fresh.length === 0) return known;
  return [...fresh, ...known].sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
}
