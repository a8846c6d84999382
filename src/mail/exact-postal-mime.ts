import PostalMime, { type Attachment, type Email, type PostalMimeOptions } from 'postal-mime';
import type { RawRange } from '../domain/raw-range.js';
import { leafContentType } from './leaf-content-type.js';
import { decodeQuotedPrintable } from './quoted-printable.js';

/*
 * postal-mime reads a message line by line and hands each part's decoder the lines without
 * their line breaks, adding "\n" after every one. A decoded part therefore comes out with
 * CRLF turned into LF and one newline too many (the CRLF before a delimiter belongs to the
 * delimiter, RFC 2046 §5.1.1), and text/calendar attachments are re-encoded on top: a PGP
 * signature.asc no longer verifies, an invite is rewritten. Its options offer no way out
 * (attachmentEncoding only chooses how the already-changed bytes are returned), so this
 * subclass remembers where each part's body lies in the message and gives every attachment
 * the exact decoded bytes of that span instead. It relies on members postal-mime 4.0 does
 * not declare in its types (listed below); the version is pinned, and the exact-bytes
 * tests (test/integration/exact-bytes-parse.test.ts) fail if they change.
 */

/** The members of postal-mime's MimeNode read here. */
interface MimeNode {
  state: 'header' | 'body' | 'finished';
  content: ArrayBuffer | null;
  contentType: { parsed: { value: string }; multipart: string | false };
  contentTransferEncoding: { encoding: string };
  subMessage?: Email;
}

type TextType = 'plain' | 'html';
type TextEntryItem = { type: 'subMessage'; value: Email };

/** The members of postal-mime's parser used and overridden here. */
interface PostalMimeInternals {
  currentNode: MimeNode;
  attachments: Attachment[];
  mimeOptions: { maxNestingDepth: number; maxHeadersSize: number };
  maxRfc822NestingDepth: number;
  rfc822NestingDepth: number;
  textMap: Map<MimeNode, unknown>;
  finalize(): Promise<void>;
  processLine(line: Uint8Array, isFinal: boolean): Promise<void>;
  collectNode(node: MimeNode, alternative: MimeNode | false, related: boolean): Promise<void>;
  collectAttachment(node: MimeNode, content: ArrayBuffer, related: boolean, rfc822DepthExceeded: boolean): void;
  collectSubMessage(node: MimeNode): Promise<void>;
  addTextEntry(selector: MimeNode, textType: TextType, item: TextEntryItem): void;
}

const PostalMimeWithInternals = PostalMime as unknown as new (options?: PostalMimeOptions) => PostalMime & PostalMimeInternals;

/** Where a part's body lies in the message: from `start` to `end` (after the last line's break). */
interface BodySpan {
  start: number;
  end: number;
  /** Length of the line break at `end` (CRLF 2, LF 1, none 0). */
  endBreak: number;
  /** Ended by a delimiter line, whose leading line break is not part of the body. */
  closedByDelimiter: boolean;
}

const CR = 0x0d;
const LF = 0x0a;
const EMPTY = new Uint8Array(0);

/** postal-mime's transfer-encoding rules (MimeNode.setupContentDecoder). */
const BASE64 = /base64/i;
const QUOTED_PRINTABLE = /quoted-printable/i;

/**
 * postal-mime, with attachments holding the exact decoded bytes of their MIME part
 * (identity for 7bit, 8bit and binary, RFC 2045 §6.7 for quoted-printable, postal-mime's own
 * base64 decoding, which is exact), calendar parts included, and single parts typed `text`
 * without a subtype read as text/plain (RFC 2045 §5.2, see leafContentType).
 */
export class ExactPostalMime extends PostalMimeWithInternals {
  readonly #spans = new Map<MimeNode, BodySpan>();
  /** Where each attachment of this message (not of a nested one) was encoded, in the parsed bytes. */
  readonly #ranges = new Map<Attachment, RawRange>();
  #bytes: Uint8Array = EMPTY;

  /**
   * Where the attachment's encoded body lies in the bytes this parser read, when it is one of
   * this message's own parts in base64 or as is (7bit, 8bit, binary): what a reader needs to
   * decode it again from the stored message. Undefined for quoted-printable parts and for
   * attachments of nested messages (their bytes are not a range of this message).
   */
  rangeOf(attachment: Attachment): RawRange | undefined {
    return this.#ranges.get(attachment);
  }

  override async processLine(line: Uint8Array, isFinal: boolean): Promise<void> {
    const node = this.currentNode;
    const before = node.state;
    // The same as super.processLine(line, true): it finalizes after the line either way.
    await super.processLine(line, false);
    // A delimiter line always finishes the current part or opens a new one, so the line
    // was body (or the blank line ending the headers) exactly when neither happened.
    const fed = this.currentNode === node && node.state === 'body';
    if (before === 'header' && fed) {
      const end = this.#lineEnd(line);
      this.#spans.set(node, { start: end, end, endBreak: 0, closedByDelimiter: false });
    } else if (before === 'body') {
      const span = this.#spans.get(node);
      if (span !== undefined && fed) {
        span.end = this.#lineEnd(line);
        span.endBreak = this.#breakLength(line, span.end);
      } else if (span !== undefined) {
        span.closedByDelimiter = true;
      }
    }
    if (isFinal) await this.finalize();
  }

  override async collectNode(node: MimeNode, alternative: MimeNode | false, related: boolean): Promise<void> {
    if (node.contentType.multipart === false) node.contentType.parsed.value = leafContentType(node.contentType.parsed.value);
    await super.collectNode(node, alternative, related);
  }

  override collectAttachment(node: MimeNode, content: ArrayBuffer, related: boolean, rfc822DepthExceeded: boolean): void {
    super.collectAttachment(node, content, related, rfc822DepthExceeded);
    const attachment = this.attachments[this.attachments.length - 1];
    if (attachment === undefined) return;
    attachment.content = this.#decodedBody(node);
    const span = this.#spans.get(node);
    const encoding = node.contentTransferEncoding.encoding;
    if (span === undefined || QUOTED_PRINTABLE.test(encoding)) return;
    this.#ranges.set(attachment, { start: span.start, end: this.#bodyEnd(span), encoding: BASE64.test(encoding) ? 'base64' : 'identity' });
  }

  /** postal-mime's collectSubMessage, parsing the part's exact bytes with this class so nested attachments are exact too. */
  override async collectSubMessage(node: MimeNode): Promise<void> {
    const subParser = new ExactPostalMime({
      ...this.mimeOptions,
      maxRfc822NestingDepth: this.maxRfc822NestingDepth,
      attachmentEncoding: 'arraybuffer',
    });
    subParser.rfc822NestingDepth = this.rfc822NestingDepth + 1;
    const subMessage = await subParser.parse(this.#decodedBody(node));
    node.subMessage = subMessage;
    // Truthiness as in postal-mime: an empty text counts as none.
    if (subMessage.text || !subMessage.html) this.addTextEntry(node, 'plain', { type: 'subMessage', value: subMessage });
    if (subMessage.html) this.addTextEntry(node, 'html', { type: 'subMessage', value: subMessage });
    subParser.textMap.forEach((entry, subNode) => this.textMap.set(subNode, entry));
    this.attachments.push(...subMessage.attachments);
  }

  /** The part's body decoded from its exact span in the message. */
  #decodedBody(node: MimeNode): Uint8Array {
    const encoding = node.contentTransferEncoding.encoding;
    if (BASE64.test(encoding)) return node.content === null ? EMPTY : new Uint8Array(node.content);
    const span = this.#spans.get(node);
    if (span === undefined) return EMPTY;
    const body = this.#bytes.subarray(span.start, this.#bodyEnd(span));
    return QUOTED_PRINTABLE.test(encoding) ? decodeQuotedPrintable(body) : body.slice();
  }

  /** Where the body ends: before the line break a closing delimiter owns. */
  #bodyEnd(span: BodySpan): number {
    return span.closedByDelimiter ? Math.max(span.start, span.end - span.endBreak) : span.end;
  }

  /** Where the raw line ends, after its line break: postal-mime strips any CRs before the LF. */
  #lineEnd(line: Uint8Array): number {
    if (this.#bytes.buffer !== line.buffer) this.#bytes = new Uint8Array(line.buffer);
    const bytes = this.#bytes;
    let i = line.byteOffset + line.byteLength;
    while (bytes[i] === CR) i++;
    if (bytes[i] === LF) i++;
    return i;
  }

  /** Length of the line break that ends at `end`: the CRLF (or bare LF) a delimiter would own. */
  #breakLength(line: Uint8Array, end: number): number {
    const contentEnd = line.byteOffset + line.byteLength;
    if (end <= contentEnd || this.#bytes[end - 1] !== LF) return 0;
    return end - 1 > contentEnd && this.#bytes[end - 2] === CR ? 2 : 1;
  }
}
