import { clientKey, clientNetwork } from '../domain/client-key.js';
import type { SmtpReply } from './replies.js';

/**
 * Simultaneous connections admitted before slots are taken back from idle ones: benchmarks
 * hold 500 concurrent connections, so twice that, while one flood cannot exhaust descriptors.
 */
export const MAX_CLIENTS = 1000;
/**
 * Connections that are accepted but not yet admitted (smtp-server waits 100 ms for early
 * talkers, then we check the network's budget) may pass MAX_CLIENTS by this much: a burst of
 * newcomers is judged rather than dropped, and descriptors stay bounded at 1,100.
 */
export const PENDING_CONNECTIONS_HEADROOM = 100;
/**
 * Idle time before `421 Timeout`: RFC 5321 §4.5.3.2 asks for minutes per command, but an
 * MX facing the internet cannot let slow clients hold slots that long; 60 s covers real MTAs.
 * smtp-server stops the clock while our handlers (delivery) are working.
 */
export const SOCKET_TIMEOUT_MS = 60_000;
/**
 * Time a connection may wait for commands in all since it connected or last delivered a
 * message (NOOP, RSET, HELO do not reset it): 5 minutes is RFC 5321 §4.5.3.2's timeout for
 * one command, so no real MTA meets it, while a client keeping slots with NOOP every 25 s does.
 */
export const IDLE_CAP_MS = 5 * 60_000;
/**
 * Refused recipients (550 5.1.1, 550 5.7.1) one connection may cause; the next one ends it
 * with 421 4.7.0. A sender with a few stale addresses stays under; a name-guessing loop does not.
 */
export const MAX_REFUSED_RECIPIENTS = 5;
/** How often the idle cap is checked at most: its precision, and cheap for 1,000 connections. */
const MAX_TICK_MS = 1_000;
/** Ticks per idle cap at least, so that a small cap (tests) is kept to within a tenth. */
const TICKS_PER_CAP = 10;

/** The connection limits of the listener; production uses the named constants above. */
export interface ConnectionLimits {
  /** Connections admitted at once; past it the oldest idle one of the biggest network is closed. */
  maxClients: number;
  /** Per-command idle timeout (smtp-server's socketTimeout). */
  socketTimeoutMs: number;
  /** Time waiting for commands in all since connect or the last delivered message. */
  idleCapMs: number;
  /** Refused recipients per connection; the next one is answered 421 4.7.0. */
  maxRefusedRecipients: number;
}

/** The production limits. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxClients: MAX_CLIENTS,
  socketTimeoutMs: SOCKET_TIMEOUT_MS,
  idleCapMs: IDLE_CAP_MS,
  maxRefusedRecipients: MAX_REFUSED_RECIPIENTS,
};

/** The fair-use budget of refused recipients per client network (services/refused-recipient-budget.ts). */
export interface RefusedRecipientBudgetPort {
  /** True when the client's network has no refusals left. */
  isSpent(clientAddress: string): Promise<boolean>;
  /** Counts one refusal; false once the network's budget is spent. */
  record(clientAddress: string): Promise<boolean>;
}

// Connection-level replies: 421 tells the client to close and retry later (RFC 5321 §3.8).
/** Per-client connection limit (RFC 3463 X.7.0: other security or policy status). */
export const TOO_MANY_CONNECTIONS: SmtpReply = { code: 421, enhanced: '4.7.0', text: 'Too many connections from your address, try again later' };
/** Too many refused recipients in this connection: a probe, not a mail. */
export const TOO_MANY_REFUSED: SmtpReply = { code: 421, enhanced: '4.7.0', text: 'Too many unknown recipients, closing connection' };
/** The client's network has spent its refused-recipient budget. */
export const NETWORK_BUDGET_SPENT: SmtpReply = { code: 421, enhanced: '4.7.0', text: 'Too many unknown recipients from your network, try again later' };
/** Closed to keep a slot for a newcomer (X.4.2: bad connection, the client may retry). */
export const EVICTED: SmtpReply = { code: 421, enhanced: '4.4.2', text: 'Idle connection closed to make room, try again later' };
/** The hard idle cap is spent. */
export const IDLE_CAP_REACHED: SmtpReply = { code: 421, enhanced: '4.4.2', text: 'Idle too long without a transaction, closing connection' };
/** Every slot is busy with a transaction: nothing idle to close (X.4.5: mail system congestion). */
export const SERVER_BUSY: SmtpReply = { code: 421, enhanced: '4.4.5', text: 'Too many connections, try again later' };

/** What the policy sees of one connection. */
export interface PolicedConnection {
  id: string;
  remoteAddress: string;
  /** Sends the 421 reply and closes the connection. */
  close(reply: SmtpReply): void;
}

/** The policy's state of one connection. */
interface ConnectionState {
  connection: PolicedConnection;
  client: string;
  network: string;
  admitted: boolean;
  closing: boolean;
  /** Our handlers running for it (RCPT lookup, DATA): the client waits for us, not idle. */
  busy: number;
  /** When it last made progress (connect, MAIL, RCPT, end of DATA): eviction order. */
  lastProgressAt: number;
  /** Time spent waiting for commands since connect or the last delivered message. */
  idleSpentMs: number;
  refused: number;
}

/** Options of ConnectionPolicy. */
export interface ConnectionPolicyOptions {
  limits: ConnectionLimits;
  /** Connections one client (clientKey) may hold; undefined: no limit (RATE_LIMITS=off). */
  maxPerClient?: number;
  budget?: RefusedRecipientBudgetPort;
  /** A budget check failed (database down): the connection is let through, this reports it. */
  onBudgetError(error: unknown): void;
  /** Monotonic milliseconds; tests may pass their own. */
  now?: () => number;
}

/**
 * Who may hold an SMTP connection and for how long (docs/api.md "SMTP abuse limits"):
 * per-client and per-network admission, slots taken back from the biggest networks' oldest
 * idle connections for newcomers, the hard idle cap, and refused-recipient limits.
 */
export class ConnectionPolicy {
  private readonly states = new Map<string, ConnectionState>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private lastTick = 0;

  constructor(private readonly options: ConnectionPolicyOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Tracks a new connection (before its greeting); it holds no slot until admitted. */
  register(connection: PolicedConnection): void {
    this.states.set(connection.id, {
      connection,
      client: clientKey(connection.remoteAddress),
      network: clientNetwork(connection.remoteAddress),
      admitted: false,
      closing: false,
      busy: 0,
      lastProgressAt: this.now(),
      idleSpentMs: 0,
      refused: 0,
    });
  }

  /** Decides a connection before its greeting: null admits it, a reply refuses it. */
  async admit(id: string): Promise<SmtpReply | null> {
    const state = this.states.get(id);
    if (state === undefined) return null;
    if (await this.budgetSpent(state.connection.remoteAddress)) return NETWORK_BUDGET_SPENT;
    // The connection may have gone while the budget was checked.
    if (!this.states.has(id)) return null;
    const { maxPerClient, limits } = this.options;
    const holding = [...this.states.values()].filter((s) => s.admitted && !s.closing);
    if (maxPerClient !== undefined && holding.filter((s) => s.client === state.client).length >= maxPerClient) {
      return TOO_MANY_CONNECTIONS;
    }
    if (holding.length >= limits.maxClients) {
      const victim = this.evictionCandidate(holding);
      if (victim === undefined) return SERVER_BUSY;
      this.closeWith(victim, EVICTED);
    }
    state.admitted = true;
    state.lastProgressAt = this.now();
    return null;
  }

  /** Forgets a closed connection. */
  release(id: string): void {
    this.states.delete(id);
  }

  /** One of our handlers starts working for the connection (the idle clock stops). */
  begin(id: string): void {
    const state = this.states.get(id);
    if (state !== undefined) state.busy += 1;
  }

  /** The handler is done; `delivered` when it was a DATA that ended (the idle budget restarts). */
  end(id: string, delivered = false): void {
    const state = this.states.get(id);
    if (state === undefined) return;
    state.busy = Math.max(0, state.busy - 1);
    state.lastProgressAt = this.now();
    if (delivered) state.idleSpentMs = 0;
  }

  /**
   * Counts a refused recipient; resolves the 421 that ends the connection when it is one too
   * many for the connection or the network's budget is spent, else null (answer the 550).
   */
  async refused(id: string): Promise<SmtpReply | null> {
    const state = this.states.get(id);
    if (state === undefined) return null;
    state.refused += 1;
    const withinBudget = await this.recordRefusal(state.connection.remoteAddress);
    if (state.refused > this.options.limits.maxRefusedRecipients) return TOO_MANY_REFUSED;
    return withinBudget ? null : NETWORK_BUDGET_SPENT;
  }

  /** Starts the idle-cap clock. */
  start(): void {
    if (this.timer !== undefined) return;
    const tickMs = Math.max(1, Math.min(MAX_TICK_MS, Math.floor(this.options.limits.idleCapMs / TICKS_PER_CAP)));
    this.lastTick = this.now();
    this.timer = setInterval(() => this.tick(), tickMs);
    this.timer.unref();
  }

  /** Stops the idle-cap clock. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Adds the time since the last tick to every waiting connection; closes those past the cap. */
  private tick(): void {
    const now = this.now();
    const elapsed = now - this.lastTick;
    this.lastTick = now;
    for (const state of this.states.values()) {
      if (!state.admitted || state.closing || state.busy > 0) continue;
      state.idleSpentMs += elapsed;
      if (state.idleSpentMs >= this.options.limits.idleCapMs) this.closeWith(state, IDLE_CAP_REACHED);
    }
  }

  /**
   * The connection to close for a newcomer: not busy, from the network holding the most
   * slots (the next biggest when those are all busy), the one idle the longest.
   */
  private evictionCandidate(holding: ConnectionState[]): ConnectionState | undefined {
    const perNetwork = new Map<string, number>();
    for (const state of holding) perNetwork.set(state.network, (perNetwork.get(state.network) ?? 0) + 1);
    let best: ConnectionState | undefined;
    let bestSlots = 0;
    for (const state of holding) {
      if (state.busy > 0) continue;
      const slots = perNetwork.get(state.network) ?? 0;
      if (best === undefined || slots > bestSlots || (slots === bestSlots && state.lastProgressAt < best.lastProgressAt)) {
        best = state;
        bestSlots = slots;
      }
    }
    return best;
  }

  private closeWith(state: ConnectionState, reply: SmtpReply): void {
    state.closing = true;
    state.connection.close(reply);
  }

  private async budgetSpent(address: string): Promise<boolean> {
    if (this.options.budget === undefined) return false;
    try {
      return await this.options.budget.isSpent(address);
    } catch (error) {
      this.options.onBudgetError(error);
      return false;
    }
  }

  private async recordRefusal(address: string): Promise<boolean> {
    if (this.options.budget === undefined) return true;
    try {
      return await this.options.budget.record(address);
    } catch (error) {
      this.options.onBudgetError(error);
      return true;
    }
  }
}
