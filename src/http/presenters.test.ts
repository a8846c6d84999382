import { describe, expect, it } from 'vitest';
import type { MessageView } from '../domain/types.js';
import { checkJsonWriter, presentCheck } from './presenters.js';

const message = (id: string, text: string): MessageView => ({
  id,
  inboxId: 'inbox',
  from: '"Ann" <ann@example.org>',
  to: 'bob@tempinbox.test',
  recipient: 'bob+tag@tempinbox.test',
  subject: 'Grüße "quoted" \u2028',
  text,
  html: null,
  receivedAt: new Date(Date.UTC(2026, 0, 1)),
  size: 10,
  attachments: [{ id: 'a', filename: 'x.pdf', contentType: 'application/pdf', size: 3 }],
  truncated: true,
  codes: ['482913'],
  links: [{ url: 'https://example.org/a?b="c"', text: 'Öffnen' }],
  auth: null,
});

describe('checkJsonWriter', () => {
  it('renders exactly the JSON of presentCheck, and measures each message in bytes', () => {
    const writer = checkJsonWriter();
    const messages = [message('m2', 'zwei 🎉\n\u0001'), message('m1', '')];
    const page = { messages, hasMore: true };
    expect(JSON.parse(writer.render(page))).toEqual(presentCheck(page));
    expect(writer.render(page)).toBe(JSON.stringify(presentCheck(page)));
    expect(writer.measure(messages[0] as MessageView)).toBe(Buffer.byteLength(JSON.stringify(presentCheck(page).emails[0])));
    expect(writer.render({ messages: [], hasMore: false })).toBe('{"success":true,"count":0,"emails":[],"has_more":false}');
  });
});
