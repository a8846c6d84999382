import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  SMTPServer,
  type SMTPServerAddress,
  type SMTPServerDataStream,
  type SMTPServerEnvelope,
  type SMTPServerSession,
} from 'smtp-server';
import type { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { AppError } from '../domain/errors.js';
import type { AcceptedRecipient, DeliveryService } from '../services/delivery-service.js';
import { logLevelFor, replyForError, type SmtpReply } from './replies.js';

/**
 * Simultaneous connections before new ones get `421` at once: benchmarks hold 500
 * concurrent connections, so twice that, while one flood cannot exhaust descriptors.
 */
export const MAX_CLIENTS = 1000;
/**
 * Idle time before `421 Timeout`: RFC 5321 §4.5.3.2 asks for minutes per command, but an
 * MX facing the internet cannot let slow clients hold slots that long; 60 s covers real MTAs.
 * smtp-server stops the clock while our handlers (delivery) are working.
 */
export const SOCKET_TIMEOUT_MS = 60_000;
/**
 * On close, how long open transactions may finish before they get `421 Server shutting
 * down`: half the 10 s stop budget of contract §1, leaving time to close the database.
 */
export const CLOSE_TIMEOUT_MS = 5_000;
/** Reply to a connection over the per-address limit (RFC 3463 4.7.0: security/policy, temporary). */
const TOO_MANY_CONNECTIONS: SmtpReply = { code: 421, enhanced: '4.7.0', text: 'Too many connections from your address, try again later' };

/** Text after the host name in the 220 greeting. */
export const BANNER = 'tempinbox inbound MX';

/** Counters the listener reports to (observability/ wires them to Prometheus). */
export interface SmtpMetrics {
  onAccepted(recipients: number, bytes: number): void;
  onRejected(code: number): void;
}

/** What the SMTP adapter needs to run. */
export interface SmtpListenerOptions {
  delivery: Pick<DeliveryService, 'acceptRecipient' | 'deliver'>;
  logger: Logger;
  /** Advertised as SIZE and enforced: larger messages get 552 5.3.4. */
  maxMessageBytes: number;
  /** Name in the greeting and EHLO reply; default: the machine's host name. */
  hostname?: string;
  /** Enables STARTTLS. */
  tls?: { key: Buffer; cert: Buffer };
  metrics?: SmtpMetrics;
  /**
   * Simultaneous connections one client address may hold (fair use); further ones get
   * `421 4.7.0` at once. Undefined: no per-address limit (RATE_LIMITS=off).
   */
  maxConnectionsPerAddress?: number;
}

/** A started-or-not SMTP listener. */
export interface SmtpListener {
  /** Starts listening; resolves with the actual port (useful with port 0). */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets open transactions finish (bounded by CLOSE_TIMEOUT_MS), resolves. */
  close(): Promise<void>;
}

/** An error smtp-server turns into the reply line `<code> <enhanced> <text>`. */
type ReplyError = Error & { responseCode: number };

/** Text that already starts with an RFC 3463 enhanced status code, e.g. `5.7.1 …`. */
const ENHANCED_CODE_PREFIX = /^[245]\.\d{1,3}\.\d{1,3} /;

/**
 * The inbound MX (contract §3) on smtp-server: decides each RCPT TO through the delivery
 * use case, and answers 250 to DATA only once the message is committed.
 */
export function createSmtpListener(options: SmtpListenerOptions): SmtpListener {
  const { delivery, logger, maxMessageBytes, metrics } = options;
  /** Recipients accepted so far, per transaction (smtp-server makes a new envelope for each). */
  const transactions = new WeakMap<SMTPServerEnvelope, Map<string, AcceptedRecipient>>();
  /** Deliveries that have not answered yet; close() waits for them (bounded). */
  const inflight = new Set<Promise<void>>();
  /** Open connections per client address, and the sessions counted in it. */
  const perAddress = new Map<string, number>();
  const counted = new Set<string>();

  const reject = (reply: SmtpReply): ReplyError => {
    metrics?.onRejected(reply.code);
    // The enhanced code goes into the text: see ConnectionsKeepingOwnCodes for why.
    return Object.assign(new Error(`${reply.enhanced} ${reply.text}`), { responseCode: reply.code });
  };

  const decideRecipient = async (address: string, session: SMTPServerSession): Promise<void> => {
    const envelope = session.envelope;
    const accepted = transactions.get(envelope) ?? new Map<string, AcceptedRecipient>();
    transactions.set(envelope, accepted);
    // smtp-server keeps one entry per address (case-insensitive); a repeat is not a new recipient.
    const key = address.toLowerCase();
    if (accepted.has(key)) return;
    accepted.set(key, await delivery.acceptRecipient(address, accepted.size));
  };

  const receive = async (stream: SMTPServerDataStream, session: SMTPServerSession): Promise<void> => {
    const envelope = session.envelope;
    const recipients = [...(transactions.get(envelope)?.values() ?? [])];
    const envelopeFrom = envelope.mailFrom === false ? '' : envelope.mailFrom.address;
    const message = await readMessage(stream, maxMessageBytes);
    if (message.truncated || stream.sizeExceeded) throw new AppError('payload_too_large');
    // DATA needs an accepted RCPT first (smtp-server answers 503 otherwise): this is a bug guard.
    if (recipients.length === 0) throw new AppError('internal_error', 'DATA without accepted recipients.');
    const result = await delivery.deliver(envelopeFrom, recipients, message.raw);
    metrics?.onAccepted(result.delivered, message.bytes);
    // Sizes and counts only: never content, subjects or local parts (they identify people).
    logger.info(
      {
        session: session.id,
        recipients: recipients.length,
        inboxes: result.delivered,
        bytes: message.bytes,
        domains: [...new Set(recipients.map((r) => domainOf(r.address)))],
        messageIds: result.messageIds,
      },
      'message accepted',
    );
  };

  const server = new SMTPServer({
    name: options.hostname,
    banner: BANNER,
    // Inbound MX only (contract §3): nobody logs in, nothing is relayed.
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    authOptional: true,
    key: options.tls?.key,
    cert: options.tls?.cert,
    hideSTARTTLS: options.tls === undefined,
    size: maxMessageBytes,
    hidePIPELINING: false,
    hide8BITMIME: false,
    hideSMTPUTF8: false,
    // Advertised, so clients may rely on the X.Y.Z codes our replies carry (RFC 2034 §3).
    hideENHANCEDSTATUSCODES: false,
    // No PTR lookup: it costs a DNS round trip per connection and decides nothing here.
    disableReverseLookup: true,
    maxClients: MAX_CLIENTS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    closeTimeout: CLOSE_TIMEOUT_MS,
    // smtp-server's own log lines are per connection and per command; ours are enough.
    logger: false,

    onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void): void {
      const limit = options.maxConnectionsPerAddress;
      if (limit === undefined) return callback();
      const open = perAddress.get(session.remoteAddress) ?? 0;
      if (open >= limit) {
        logger.debug({ session: session.id, open }, 'smtp connection refused: per-address limit');
        return callback(reject(TOO_MANY_CONNECTIONS));
      }
      perAddress.set(session.remoteAddress, open + 1);
      counted.add(session.id);
      callback();
    },

    onClose(session: SMTPServerSession): void {
      if (!counted.delete(session.id)) return;
      const open = (perAddress.get(session.remoteAddress) ?? 1) - 1;
      if (open <= 0) perAddress.delete(session.remoteAddress);
      else perAddress.set(session.remoteAddress, open);
    },

    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
      decideRecipient(address.address, session)
        .then(
          () => callback(),
          (error: unknown) => {
            const reply = replyForError(error);
            logRejection(logger, error, reply, { session: session.id, domain: domainOf(address.address) });
            callback(reject(reply));
          },
        )
        .catch((error: unknown) => logger.error({ err: error }, 'smtp RCPT handler failed'));
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void): void {
      const done = receive(stream, session)
        .then(
          () => callback(null, 'Message accepted'),
          (error: unknown) => {
            if (error instanceof ClientGoneError) {
              // Nobody is left to answer; nothing was stored, the sender's queue retries.
              logger.debug({ session: session.id, bytes: stream.byteLength }, 'smtp client left during DATA');
              callback(error);
              return;
            }
            const reply = replyForError(error);
            logRejection(logger, error, reply, { session: session.id, bytes: stream.byteLength });
            callback(reject(reply));
          },
        )
        // Never let a failure escape the handler: smtp-server's callbacks are not ours to trust.
        .catch((error: unknown) => logger.error({ err: error }, 'smtp DATA handler failed'))
        .finally(() => inflight.delete(done));
      inflight.add(done);
    },
  });
  server.connections = new ConnectionsKeepingOwnCodes();
  // Socket and TLS errors of single connections arrive here; an unhandled 'error' would crash.
  server.on('error', (error: Error) => logger.warn({ err: error }, 'smtp connection error'));

  return {
    listen(port: number, host: string): Promise<number> {
      return new Promise((resolve, rejectListen) => {
        const onError = (error: Error): void => rejectListen(error);
        server.server.once('error', onError);
        server.listen(port, host, () => {
          server.server.off('error', onError);
          resolve((server.server.address() as AddressInfo).port);
        });
      });
    },

    async close(): Promise<void> {
      // smtp-server stops accepting at once, answers new commands with 421, and after
      // closeTimeout sends 421 to the connections still open and resolves.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // A delivery whose connection was cut may still be committing: let it end (bounded)
      // so the composition root does not close the database under it.
      await settleWithin([...inflight], CLOSE_TIMEOUT_MS);
    },
  };
}

/** A message as read from DATA: at most `cap` bytes kept, the rest only counted. */
interface ReceivedMessage {
  raw: Buffer;
  bytes: number;
  truncated: boolean;
}

/**
 * Collects the DATA stream without ever holding more than `cap` bytes, and keeps reading
 * to the end of an oversized message so that the reply comes at the right place in the
 * protocol (after the final dot).
 */
function readMessage(stream: SMTPServerDataStream, cap: number): Promise<ReceivedMessage> {
  return new Promise((resolve, rejectRead) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let bytes = 0;
    let truncated = false;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (truncated || kept + chunk.length > cap) {
        truncated = true;
        return;
      }
      chunks.push(chunk);
      kept += chunk.length;
    });
    stream.once('end', () => resolve({ raw: Buffer.concat(chunks, kept), bytes, truncated }));
    // The client went away mid-message: smtp-server destroys the stream with an error.
    stream.once('error', (error: Error) => rejectRead(new ClientGoneError(error)));
  });
}

/** The DATA stream broke off before the final dot (the connection closed). */
class ClientGoneError extends Error {
  constructor(cause: Error) {
    super('connection closed during DATA', { cause });
    this.name = 'ClientGoneError';
  }
}

/**
 * smtp-server, once ENHANCEDSTATUSCODES is on, prefixes every reply with an enhanced code
 * derived from the basic code alone (ENHANCED_STATUS_CODES in its lib/smtp-connection.js:
 * 550 → 5.1.1, 552 → 5.2.2, 501 → 5.5.4), so "relay denied" could never be 550 5.7.1.
 * Our replies carry their code in the text (smtp/replies.ts); for those the automatic
 * prefix is skipped (send's context `false`). Its own replies keep theirs, e.g. the
 * `552 5.3.4` for a MAIL FROM SIZE= over the limit. The set is where smtp-server registers
 * each new connection before the connection writes anything.
 */
class ConnectionsKeepingOwnCodes extends Set<SMTPConnection> {
  override add(connection: SMTPConnection): this {
    const send = connection.send.bind(connection);
    connection.send = (code, data, context) =>
      send(code, data, typeof data === 'string' && ENHANCED_CODE_PREFIX.test(data) ? false : context);
    return super.add(connection);
  }
}

/** The domain part of an address, lowercase (all that is logged of an address). */
function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/** Logs a refused RCPT or DATA: expected refusals quietly, failures of ours loudly. */
function logRejection(logger: Logger, error: unknown, reply: SmtpReply, context: Record<string, unknown>): void {
  const fields = { ...context, code: reply.code, enhanced: reply.enhanced };
  if (reply.code === 451 || reply.enhanced === '4.3.1') logger[logLevelFor(error)]({ ...fields, err: error }, 'smtp temporary failure');
  else logger.debug(fields, 'smtp rejected');
}

/** Waits until every promise has settled or `ms` passed, whichever comes first. */
async function settleWithin(promises: Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([Promise.allSettled(promises), timeout]);
  clearTimeout(timer);
}
