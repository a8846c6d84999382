import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import {
  SMTPServer,
  type SMTPServerAddress,
  type SMTPServerDataStream,
  type SMTPServerEnvelope,
  type SMTPServerSession,
} from 'smtp-server';
import type { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { joinWithRoomInFront } from '../domain/message-bytes.js';
import type { AcceptedRecipient, DeliveryService } from '../services/delivery-service.js';
import {
  ConnectionPolicy,
  DEFAULT_CONNECTION_LIMITS,
  PENDING_CONNECTIONS_HEADROOM,
  type ConnectionLimits,
  type RefusedRecipientBudgetPort,
} from './connection-policy.js';
import { logLevelFor, replyForDataError, replyForError, type SmtpReply } from './replies.js';
import { traceHeaders } from './trace-headers.js';
/**
 * On close, how long open transactions may finish before they get `421 Server shutting
 * down`: half the 10 s stop budget (docs/api.md), leaving time to close the database.
 */
export const CLOSE_TIMEOUT_MS = 5_000;

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
   * Simultaneous connections one client (IPv4 address, IPv6 /64) may hold (fair use); further
   * ones get `421 4.7.0` at once. Undefined: no per-client limit (RATE_LIMITS=off).
   */
  maxConnectionsPerAddress?: number;
  /** Connection limits; default DEFAULT_CONNECTION_LIMITS (tests pass small numbers). */
  limits?: Partial<ConnectionLimits>;
  /** Refused recipients per client network (fair use); undefined: no budget (RATE_LIMITS=off). */
  refusedRecipients?: RefusedRecipientBudgetPort;
  /** Dates the Received trace header; default the system clock. */
  clock?: Clock;
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
 * The inbound MX (docs/api.md "SMTP") on smtp-server: decides each RCPT TO through the delivery
 * use case, and answers 250 to DATA only once the message is committed.
 */
export function createSmtpListener(options: SmtpListenerOptions): SmtpListener {
  const { delivery, logger, maxMessageBytes, metrics } = options;
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  const clock = options.clock ?? systemClock;
  // smtp-server's own default for the greeting name, so the trace header names us the same way.
  const serverName = options.hostname ?? hostname();
  const policy = new ConnectionPolicy({
    limits,
    maxPerClient: options.maxConnectionsPerAddress,
    budget: options.refusedRecipients,
    onBudgetError: (error) => logger.warn({ err: error }, 'smtp refused-recipient budget unavailable; connection let through'),
  });
  /** Recipients accepted so far, per transaction (smtp-server makes a new envelope for each). */
  const transactions = new WeakMap<SMTPServerEnvelope, Map<string, AcceptedRecipient>>();
  /** Deliveries that have not answered yet; close() waits for them (bounded). */
  const inflight = new Set<Promise<void>>();

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
    // RFC 5321 §4.4: the receiving server prepends its trace lines; the received bytes follow
    // unchanged (the delivery puts the Authentication-Results header between them).
    const traceId = newId();
    const trace = traceHeaders({
      envelopeFrom,
      helo: session.hostNameAppearsAs,
      clientAddress: session.remoteAddress,
      serverName,
      protocol: session.transmissionType,
      id: traceId,
      date: clock.now(),
    });
    const result = await delivery.deliver(envelopeFrom, recipients, message.raw, {
      trace,
      clientAddress: session.remoteAddress,
      helo: session.hostNameAppearsAs,
    });
    metrics?.onAccepted(result.delivered, message.bytes);
    // Sizes and counts only: never content, subjects or local parts (they identify people).
    logger.info(
      {
        session: session.id,
        traceId,
        recipients: recipients.length,
        inboxes: result.delivered,
        // Inboxes that were full or had expired by the commit: the 250 covers the others.
        refused: result.refused,
        bytes: message.bytes,
        domains: [...new Set(recipients.map((r) => domainOf(r.address)))],
        messageIds: result.messageIds,
      },
      'message accepted',
    );
  };

  const server = new SMTPServer({
    name: serverName,
    banner: BANNER,
    // Inbound MX only (docs/api.md "SMTP"): nobody logs in, nothing is relayed.
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
    // Hard limit; ConnectionPolicy admits at most limits.maxClients of them (see its headroom).
    maxClients: limits.maxClients + PENDING_CONNECTIONS_HEADROOM,
    socketTimeout: limits.socketTimeoutMs,
    closeTimeout: CLOSE_TIMEOUT_MS,
    // smtp-server's own log lines are per connection and per command; ours are enough.
    logger: false,

    onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void): void {
      policy
        .admit(session.id)
        .then((refusal) => {
          if (refusal === null) return callback();
          logger.debug({ session: session.id, code: refusal.code, enhanced: refusal.enhanced }, 'smtp connection refused');
          callback(reject(refusal));
        })
        .catch((error: unknown) => logger.error({ err: error }, 'smtp connect handler failed'));
    },

    onClose(session: SMTPServerSession): void {
      policy.release(session.id);
    },

    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
      policy.begin(session.id);
      decideRecipient(address.address, session)
        .then(
          () => callback(),
          async (error: unknown) => {
            const reply = replyForError(error);
            logRejection(logger, error, reply, { session: session.id, domain: domainOf(address.address) });
            // A refused recipient may be a probe: counted per connection and per network (421 ends it).
            const verdict = isRefusal(reply) ? await policy.refused(session.id) : null;
            callback(reject(verdict ?? reply));
          },
        )
        .catch((error: unknown) => logger.error({ err: error }, 'smtp RCPT handler failed'))
        .finally(() => policy.end(session.id));
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void): void {
      policy.begin(session.id);
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
            const reply = replyForDataError(error);
            logRejection(logger, error, reply, { session: session.id, bytes: stream.byteLength });
            callback(reject(reply));
          },
        )
        // Never let a failure escape the handler: smtp-server's callbacks are not ours to trust.
        .catch((error: unknown) => logger.error({ err: error }, 'smtp DATA handler failed'))
        .finally(() => {
          inflight.delete(done);
          policy.end(session.id, true);
        });
      inflight.add(done);
    },
  });
  server.connections = new ConnectionsKeepingOwnCodes((connection) =>
    policy.register({
      id: connection.id,
      remoteAddress: connection.remoteAddress,
      close: (reply) => {
        metrics?.onRejected(reply.code);
        logger.debug({ session: connection.id, code: reply.code, enhanced: reply.enhanced }, 'smtp connection closed by policy');
        // send() closes the connection after a 421 (smtp-server's SMTPConnection).
        connection.send(reply.code, `${reply.enhanced} ${reply.text}`);
      },
    }),
  );
  // Socket and TLS errors of single connections arrive here; an unhandled 'error' would crash.
  server.on('error', (error: Error) => logger.warn({ err: error }, 'smtp connection error'));

  return {
    listen(port: number, host: string): Promise<number> {
      return new Promise((resolve, rejectListen) => {
        const onError = (error: Error): void => rejectListen(error);
        server.server.once('error', onError);
        server.listen(port, host, () => {
          server.server.off('error', onError);
          policy.start();
          resolve((server.server.address() as AddressInfo).port);
        });
      });
    },

    async close(): Promise<void> {
      // smtp-server stops accepting at once, answers new commands with 421, and after
      // closeTimeout sends 421 to the connections still open and resolves.
      policy.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // A delivery whose connection was cut may still be committing: let it end (bounded)
      // so the composition root does not close the database under it.
      await settleWithin([...inflight], CLOSE_TIMEOUT_MS);
    },
  };
}

/** A message as read from DATA: at most `cap` bytes kept, the rest only counted. */
interface ReceivedMessage {
  /** With room in front for the trace lines (domain/message-bytes.ts). */
  raw: Uint8Array;
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
    // The one copy of the message on this thread: the stored message is built around it.
    stream.once('end', () => resolve({ raw: truncated ? new Uint8Array(0) : joinWithRoomInFront(chunks, kept), bytes, truncated }));
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
  /** `onNew` sees each new connection once, before its greeting (ConnectionPolicy.register). */
  constructor(private readonly onNew: (connection: SMTPConnection) => void = () => undefined) {
    super();
  }

  override add(connection: SMTPConnection): this {
    if (this.has(connection)) return this;
    const send = connection.send.bind(connection);
    connection.send = (code, data, context) =>
      send(code, data, typeof data === 'string' && ENHANCED_CODE_PREFIX.test(data) ? false : context);
    this.onNew(connection);
    return super.add(connection);
  }
}

/** A recipient refused for good (unknown, relay): what name-guessing probes get. */
function isRefusal(reply: SmtpReply): boolean {
  return reply.code === 550 && (reply.enhanced === '5.1.1' || reply.enhanced === '5.7.1');
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
