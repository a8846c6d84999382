import { cleanText, stripControls } from './clean-text.js';
import { htmlToPlainText } from './html-to-plain-text.js';
import { sanitizeMailHtml } from './sanitize-html.js';

/** The text and HTML a reader sees. */
export interface MailBody {
  text: string;
  html: string | null;
}

/**
 * Builds the readable body from the decoded parts: the HTML sanitised (null when there is
 * none, or nothing survives sanitising), and the text part, or when there is no text part
 * (or only whitespace), text derived from the sanitised HTML.
 */
export function mailBody(text: string | undefined, html: string | undefined, maxTextChars: number): MailBody {
  // Not cut here (a cut could end inside a tag): sanitizeMailHtml bounds its own output.
  const safeHtml = html === undefined ? null : stripControls(sanitizeMailHtml(html)).trim();
  const shownHtml = safeHtml === '' ? null : safeHtml;
  const hasText = text !== undefined && text.trim() !== '';
  const body = hasText ? text : shownHtml === null ? '' : htmlToPlainText(shownHtml);
  return { text: cleanText(body, maxTextChars), html: shownHtml };
}
