import type { Message } from '@tempinbox/client';
import { describe, expect, it } from 'vitest';
import { MAX_TEXT_CHARS, waitedMessage } from '../src/tool-shapes.js';

/** A message as the API lists it, with `body` as given. */
function message(body: string): Message {
  return {
    id: 'AAAAAAAAAAAAAAAAAAAAAA', from: 'a@example.org', to: 'b@tempinbox.test', recipient: 'b@tempinbox.test', subject: 's', body, html: null,
    date: '2026-01-01T00:00:00.000Z', attachments: [], codes: [], links: [], auth: null, truncated: false,
  };
}

describe('waitedMessage', () => {
  it('cuts the text to at most MAX_TEXT_CHARS without splitting a character in two', () => {
    const text = waitedMessage(message(`${'a'.repeat(MAX_TEXT_CHARS - 1)}😀 and more`)).text;
    expect(text.length).toBeLessThanOrEqual(MAX_TEXT_CHARS);
    expect(text).toBe('a'.repeat(MAX_TEXT_CHARS - 1));
    expect(waitedMessage(message('short')).text).toBe('short');
    expect(waitedMessage(message('😀'.repeat(MAX_TEXT_CHARS))).text).toBe('😀'.repeat(MAX_TEXT_CHARS / 2));
  });
});
