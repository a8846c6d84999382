import pg from 'pg';
import { InProcessInboxEvents } from '../../events/in-process-inbox-events.js';
import type { InboxEvent, InboxEventListener, InboxEvents } from '../../ports/inbox-events.js';
import { decodeInboxEvent, INBOX_EVENTS_CHANNEL } from './inbox-notify.js';
import { POSTGRES_CONNECT_TIMEOUT_MS } from './postgres-store.js';

/** First wait before reconnecting a lost LISTEN connection; doubles per failed try. */
export const LISTEN_RECONNECT_MIN_MS = 100;
/** Longest wait between reconnect tries: a restarted server is found again within seconds. */
export const LISTEN_RECONNECT_MAX_MS = 5000;

/** What the PostgreSQL event bus needs. */
export interface PostgresInboxEventsOptions {
  url: string;
  /** The LISTEN connection failed or came back (logged; never fatal). */
  onConnectionEvent?: (state: 'lost' | 'restored', error?: Error) => void;
}

/**
 * Inbox events across nodes (docs/scaling.md "Live mail"): one dedicated connection per node
 * LISTENs on INBOX_EVENTS_CHANNEL; the store NOTIFYs inside the transaction that writes
 * (storage/sql/inbox-notify.ts), so an event arrives only after its commit. publish() is the
 * same-node fast path (the node's own NOTIFY arrives too: a second wake-up, harmless).
 * A lost connection is reconnected with backoff; once it LISTENs again every subscriber gets
 * `resync` and re-reads the store, so events NOTIFYed while it was down are not lost.
 */
export class PostgresInboxEvents implements InboxEvents {
  private readonly local = new InProcessInboxEvents();
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private delayMs = LISTEN_RECONNECT_MIN_MS;
  /** A connection was lost since the last LISTEN: the next one must resync everyone. */
  private wasLost = false;

  constructor(private readonly options: PostgresInboxEventsOptions) {}

  publish(event: InboxEvent): void {
    this.local.publish(event);
  }

  subscribe(inboxId: string, listener: InboxEventListener): () => void {
    return this.local.subscribe(inboxId, listener);
  }

  /** The backend pid of the LISTEN connection (tests terminate it); null while disconnected. */
  get listenerPid(): number | null {
    const pid = (this.client as unknown as { processID?: number } | null)?.processID;
    return typeof pid === 'number' ? pid : null;
  }

  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await this.local.close();
    await client?.end().catch(() => undefined);
  }

  /** Opens the connection and LISTENs; on failure schedules the next try. */
  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url, connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS, keepAlive: true, application_name: 'tempinbox-listen' });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.options.onConnectionEvent?.('lost', error);
      this.scheduleReconnect();
    };
    client.on('error', (error) => onLost(error));
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel !== INBOX_EVENTS_CHANNEL || message.payload === undefined) return;
      const event = decodeInboxEvent(message.payload);
      if (event !== null) this.local.publish(event);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${INBOX_EVENTS_CHANNEL}`);
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.delayMs = LISTEN_RECONNECT_MIN_MS;
    if (this.wasLost) {
      this.wasLost = false;
      this.options.onConnectionEvent?.('restored');
      // Whatever was NOTIFYed while nobody listened: every subscriber catches up from the database.
      this.local.publish({ type: 'resync' });
    }
  }

  private scheduleReconnect(): void {
    this.wasLost = true;
    clearTimeout(this.retryTimer);
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, LISTEN_RECONNECT_MAX_MS);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }
}
