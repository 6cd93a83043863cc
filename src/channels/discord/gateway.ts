/**
 * The Discord Gateway v10 client, on Bun's built-in WebSocket: one
 * connection at a time, kept up until stop() or a close code that no
 * reconnect can fix.
 *
 * A connection: the URL from GET /gateway/bot (discovery.ts: the session
 * start limit, max_concurrency), or the session's resume_gateway_url; Hello →
 * heartbeats (the first after `interval * jitter`) → Identify, or Resume with
 * the session id and last sequence number; READY or RESUMED → ready. A beat
 * that finds the previous one unacknowledged means a zombie connection: close
 * it and resume. Op 7 reconnects and resumes; op 9 resumes when its `d` says
 * so, else waits 1–5 s and identifies anew. After a close, the close-code
 * table (protocol.ts) picks resume, identify or stop; reconnects back off
 * with jitter, and the count resets once a new connection is acknowledged.
 *
 * Dispatches run one at a time through a table of handlers by event name
 * (MESSAGE_CREATE, INTERACTION_CREATE, and what teaches the channel directory). A
 * sequence number counts as taken in only once its handler resolved: a
 * handler that throws (the inbox at capacity) makes the client resume from
 * the last event it did take in, so Discord replays the rest.
 */
import type { GatewayReadyDispatchData } from "discord-api-types/v10";
import { describeError } from "../../kernel/errors.ts";
import type { ChannelRuntimeState } from "../../kernel/health.ts";
import type { Logger } from "../../kernel/log.ts";
import { type Sleep, sleep } from "../../kernel/wait.ts";
import type { DiscordApi } from "./api.ts";
import { GatewayDiscovery } from "./discovery.ts";
import {
  type Backoff,
  closeAction,
  DEFAULT_BACKOFF,
  type Frame,
  firstBeatDelay,
  helloInterval,
  identifyPayload,
  invalidSessionDelay,
  parseFrame,
  RESUMABLE_CLOSE,
  reconnectDelay,
  resumePayload,
  socketUrl,
} from "./protocol.ts";
import type { StoredSession } from "./session.ts";
import { GatewayOpcodes } from "./wire.ts";

/** One dispatch as its handler sees it. */
export interface DispatchEvent {
  /** The event's sequence number. */
  seq: number | null;
  /**
   * Save the session at this sequence number. A handler that stores what it
   * received passes this as the `commit` of AdapterContext.submit, so the
   * event and the fact that it was taken in are written together.
   */
  commit(): void;
}

/** Handles one dispatch event; throwing means "not taken in": the client resumes and Discord replays it. */
export type DispatchHandler = (data: unknown, event: DispatchEvent) => Promise<void> | void;

/** Where the session survives a restart (DiscordStateStore). */
export interface SessionPersistence {
  loadSession(): StoredSession | undefined;
  saveSession(session: StoredSession): void;
  clearSession(): void;
}

export interface GatewayClientOptions {
  token: string;
  api: Pick<DiscordApi, "getGatewayBot">;
  /** Dispatch handlers by event name (`MESSAGE_CREATE`, `READY`, …); events without one are taken in and dropped. */
  handlers: ReadonlyMap<string, DispatchHandler>;
  log: Logger;
  store?: SessionPersistence;
  /** Jitter source, [0, 1) (default Math.random). */
  random?: () => number;
  /** Every wait between connections (backoff, op 9, the session start limit); abortable. */
  sleep?: Sleep;
  now?: () => number;
  backoff?: Backoff;
  /** How long to wait for Hello after the socket opens (default 20 s). */
  helloTimeoutMs?: number;
  /** After Fermix closes a socket, how long to wait for the close to complete before giving up on it (default 3 s). */
  closeGraceMs?: number;
}

/** What ended a connection, and so what the next one does. */
type Outcome = { kind: "resume" } | { kind: "identify"; waitMs?: number } | { kind: "stop"; reason: string } | { kind: "stopped" };

/** One socket's state. */
interface Connection {
  ws: WebSocket;
  mode: "resume" | "identify";
  acked: boolean;
  /** Set once Fermix has decided to end this connection: later frames are ignored (a resume replays them). */
  decided?: Outcome;
  finished: boolean;
  timers: Set<ReturnType<typeof setTimeout>>;
  /** Dispatches, in order, one at a time. */
  chain: Promise<void>;
  /** READY or RESUMED seen and not yet acknowledged by a heartbeat ACK. */
  awaitingHealthyAck: boolean;
  /** Ends the connection once (the close event, or the grace timer after Fermix closed it). */
  finish?: (outcome: Outcome) => void;
  graceTimer?: ReturnType<typeof setTimeout>;
}

/** Times the same event may fail its handler before it is given up (logged) instead of replayed again. */
const MAX_REPLAYS = 5;

export class GatewayClient {
  private status: ChannelRuntimeState = { status: "starting", process_alive: false, detail: "not started" };
  private session: StoredSession | undefined;
  private attempt = 0;
  private failedSeq: number | null = null;
  private failedTimes = 0;
  private controller: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private current: Connection | undefined;
  private readonly random: () => number;
  private readonly sleepFn: Sleep;
  private readonly discovery: GatewayDiscovery;

  constructor(private readonly options: GatewayClientOptions) {
    this.random = options.random ?? Math.random;
    this.sleepFn = options.sleep ?? sleep;
    this.discovery = new GatewayDiscovery(options.api, options.log, this.sleepFn, options.now ?? Date.now);
  }

  /** What health reports: starting until READY, ready while a session is live, failed after a fatal close. */
  state(): ChannelRuntimeState {
    return { ...this.status };
  }

  /** Start connecting in the background (idempotent); a stored session is resumed first. */
  start(): void {
    if (this.loop) return;
    this.controller = new AbortController();
    this.session = this.options.store?.loadSession();
    this.status = { status: "starting", process_alive: false, detail: "connecting to the Discord gateway" };
    const signal = this.controller.signal;
    this.loop = this.run(signal).catch((error) => {
      this.fail("the gateway client crashed", { error: describeError(error) });
    });
  }

  /** Close the socket (resumably: a restart picks the session up again) and wait for the loop to end. */
  async stop(): Promise<void> {
    this.controller?.abort();
    if (this.current) this.decide(this.current, { kind: "stopped" }, "stopping");
    await this.loop;
    if (this.session) this.options.store?.saveSession(this.session);
    if (this.status.status !== "failed") this.status = { status: "failed", process_alive: false, detail: "stopped" };
  }

  private async run(signal: AbortSignal): Promise<void> {
    let delay = 0;
    while (!signal.aborted) {
      if (delay > 0 && !(await this.wait(delay, signal))) return;
      let url: string;
      let mode: Connection["mode"];
      if (this.session) {
        url = this.session.resumeUrl;
        mode = "resume";
      } else {
        const found = await this.discovery.next(signal);
        if (found.kind === "stop") return this.fail(found.reason);
        if (found.kind === "retry") {
          this.status = { status: "starting", process_alive: false, detail: found.detail };
          delay = found.delayMs ?? this.nextBackoff();
          continue;
        }
        url = found.url;
        mode = "identify";
      }
      const outcome = await this.connect(url, mode, signal);
      switch (outcome.kind) {
        case "stopped":
          return;
        case "stop":
          return this.fail(outcome.reason);
        case "resume":
          delay = this.nextBackoff();
          break;
        case "identify":
          this.dropSession();
          delay = Math.max(outcome.waitMs ?? 0, this.nextBackoff());
          break;
      }
    }
  }

  /** Open one socket and run it until it closes; resolves with what to do next. */
  private connect(url: string, mode: Connection["mode"], signal: AbortSignal): Promise<Outcome> {
    const { log } = this.options;
    return new Promise<Outcome>((resolve) => {
      if (signal.aborted) return resolve({ kind: "stopped" });
      let ws: WebSocket;
      try {
        ws = new WebSocket(socketUrl(url));
      } catch (error) {
        // The URL came from Discord, and the error may quote it: the log has it, health our words.
        log.warn("discord gateway socket could not be opened", { error: describeError(error) });
        this.reconnecting("cannot open the gateway socket");
        return resolve(mode === "resume" ? { kind: "resume" } : { kind: "identify" });
      }
      const conn: Connection = { ws, mode, acked: true, finished: false, timers: new Set(), chain: Promise.resolve(), awaitingHealthyAck: false };
      this.current = conn;
      const finish = (fallback: Outcome) => {
        if (conn.finished) return;
        conn.finished = true;
        for (const timer of conn.timers) clearTimeout(timer);
        clearTimeout(conn.graceTimer);
        if (this.current === conn) this.current = undefined;
        this.status = { ...this.status, process_alive: false };
        // Let the dispatch in progress (a submit) finish, so the sequence number it took in counts.
        void conn.chain.then(() => resolve(conn.decided ?? fallback));
      };
      conn.finish = finish;
      ws.onopen = () => {
        this.status = { ...this.status, process_alive: true };
        this.timer(conn, this.options.helloTimeoutMs ?? 20_000, () => this.decide(conn, this.retryOutcome(), "no Hello from the gateway"));
      };
      ws.onmessage = (event) => {
        if (conn.decided || conn.finished) return;
        const frame = parseFrame(event.data);
        if (!frame) {
          log.debug("discord gateway frame skipped: not a JSON payload");
          return;
        }
        this.onFrame(conn, frame);
      };
      ws.onclose = (event) => {
        if (conn.decided) return finish(conn.decided);
        const action = closeAction(event.code);
        // The close code is ours to show; the reason text is Discord's, for the log only.
        const why = `the gateway closed the connection (${event.code})`;
        if (action.kind === "stop") return finish(action);
        log.info("discord gateway connection closed; reconnecting", { code: event.code, ...(event.reason ? { reason: event.reason } : {}), next: action.kind });
        this.reconnecting(why);
        finish(action.kind === "resume" ? this.retryOutcome() : { kind: "identify" });
      };
      // An error is always followed by a close event, which decides what happens next.
      ws.onerror = () => {};
    });
  }

  private onFrame(conn: Connection, frame: Frame): void {
    const { log, token } = this.options;
    switch (frame.op) {
      case GatewayOpcodes.Hello: {
        const interval = helloInterval(frame.d);
        if (interval === null) {
          this.decide(conn, this.retryOutcome(), "Hello without a usable heartbeat_interval");
          return;
        }
        for (const timer of conn.timers) clearTimeout(timer);
        conn.timers.clear();
        this.heartbeat(conn, interval);
        if (conn.mode === "resume" && this.session) {
          this.send(conn, resumePayload(token, this.session.sessionId, this.session.seq));
        } else {
          this.discovery.identified();
          this.send(conn, identifyPayload(token, process.platform));
        }
        return;
      }
      case GatewayOpcodes.HeartbeatAck:
        conn.acked = true;
        if (conn.awaitingHealthyAck) {
          conn.awaitingHealthyAck = false;
          this.attempt = 0;
        }
        return;
      case GatewayOpcodes.Heartbeat:
        this.send(conn, { op: GatewayOpcodes.Heartbeat, d: this.session?.seq ?? null });
        return;
      case GatewayOpcodes.Reconnect:
        this.decide(conn, this.retryOutcome(), "the gateway asked to reconnect (op 7)");
        return;
      case GatewayOpcodes.InvalidSession:
        if (frame.d === true && this.session) this.decide(conn, { kind: "resume" }, "invalid session (op 9), resumable");
        else this.decide(conn, { kind: "identify", waitMs: invalidSessionDelay(this.random) }, "invalid session (op 9): identifying anew");
        return;
      case GatewayOpcodes.Dispatch:
        conn.chain = conn.chain
          .then(() => this.dispatch(conn, frame))
          .catch((error) => {
            log.error("discord dispatch failed", { event: frame.t ?? "?", error: describeError(error) });
          });
        return;
      default:
        log.debug("discord gateway opcode ignored", { op: frame.op });
    }
  }

  /** Run one dispatch through its handler; only then does its sequence number count as taken in. */
  private async dispatch(conn: Connection, frame: Frame): Promise<void> {
    if (conn.decided || conn.finished) return;
    const { log, handlers } = this.options;
    if (frame.t === "READY") this.onReady(conn, frame.d as GatewayReadyDispatchData);
    if (frame.t === "RESUMED") this.onSessionLive(conn, "resumed");
    const seq = frame.s;
    const handler = frame.t ? handlers.get(frame.t) : undefined;
    if (handler) {
      try {
        await handler(frame.d, { seq, commit: () => this.persistAt(seq) });
      } catch (error) {
        const why = describeError(error);
        if (seq === null || !this.session || this.countFailure(seq) < MAX_REPLAYS) {
          log.warn("discord event not taken in; resuming so the gateway replays it", { event: frame.t, error: why });
          return this.decide(conn, this.retryOutcome(), "an event could not be handed off");
        }
        log.error("discord event failed repeatedly; dropped", { event: frame.t, seq, error: why });
      }
    }
    if (seq !== null && this.session) this.session.seq = seq;
    if (frame.t === "READY" && this.session) this.options.store?.saveSession(this.session);
  }

  private onReady(conn: Connection, data: GatewayReadyDispatchData): void {
    const sessionId = typeof data?.session_id === "string" ? data.session_id : undefined;
    const resumeUrl = typeof data?.resume_gateway_url === "string" ? data.resume_gateway_url : undefined;
    if (!sessionId || !resumeUrl) {
      this.options.log.warn("discord READY without a session id or resume URL: this session cannot be resumed");
      this.session = undefined;
    } else {
      this.session = { sessionId, resumeUrl, seq: null };
    }
    this.onSessionLive(conn, "ready");
  }

  private onSessionLive(conn: Connection, how: "ready" | "resumed"): void {
    const was = this.status.detail;
    this.status = { status: "ready", process_alive: true };
    conn.awaitingHealthyAck = true;
    this.options.log.info(
      how === "ready" ? "discord gateway ready" : "discord gateway session resumed",
      was && was !== "connecting to the Discord gateway" ? { after: was } : {},
    );
  }

  /** Heartbeats at `interval`, the first after `interval * jitter`; a beat that finds the last one unacknowledged ends a zombie connection. */
  private heartbeat(conn: Connection, interval: number): void {
    const beat = () => {
      if (conn.decided || conn.finished) return;
      if (!conn.acked) return this.decide(conn, this.retryOutcome(), "no heartbeat ACK since the last beat (zombie connection)");
      conn.acked = false;
      this.send(conn, { op: GatewayOpcodes.Heartbeat, d: this.session?.seq ?? null });
      this.timer(conn, interval, beat);
    };
    this.timer(conn, firstBeatDelay(interval, this.random), beat);
  }

  /** End a connection on Fermix's side: close it with a code that keeps the session (or 1000 when it is gone anyway). */
  private decide(conn: Connection, outcome: Outcome, why: string): void {
    if (conn.decided || conn.finished) return;
    conn.decided = outcome;
    for (const timer of conn.timers) clearTimeout(timer);
    conn.timers.clear();
    if (outcome.kind !== "stopped") {
      this.options.log.warn("discord gateway reconnecting", { reason: why, next: outcome.kind });
      this.reconnecting(why);
    }
    try {
      conn.ws.close(outcome.kind === "identify" ? 1000 : RESUMABLE_CLOSE, why.slice(0, 100));
    } catch {
      // Already closed: the close event (or the grace timer) finishes it.
    }
    // A dead TCP connection may never complete the close handshake: do not wait on it for long.
    conn.graceTimer = setTimeout(() => {
      if (conn.finished) return;
      try {
        conn.ws.terminate();
      } catch {}
      conn.finish?.(outcome);
    }, this.options.closeGraceMs ?? 3000);
  }

  /** Resume when there is a session to resume, else identify. */
  private retryOutcome(): Outcome {
    return this.session ? { kind: "resume" } : { kind: "identify" };
  }

  private persistAt(seq: number | null): void {
    if (!this.session) return;
    this.options.store?.saveSession({ ...this.session, seq: seq ?? this.session.seq });
  }

  private countFailure(seq: number): number {
    if (this.failedSeq === seq) return ++this.failedTimes;
    this.failedSeq = seq;
    this.failedTimes = 1;
    return 1;
  }

  private dropSession(): void {
    this.session = undefined;
    this.options.store?.clearSession();
  }

  private nextBackoff(): number {
    return reconnectDelay(this.attempt++, this.options.backoff ?? DEFAULT_BACKOFF, this.random);
  }

  private reconnecting(why: string): void {
    this.status = { status: "starting", process_alive: false, detail: `reconnecting: ${why}` };
  }

  /** Stop for good: a fatal close code or a rejected token. No reconnect follows; the reason is what health shows. */
  private fail(reason: string, logged: Record<string, string> = {}): void {
    this.dropSession();
    this.status = { status: "failed", process_alive: false, detail: reason };
    this.options.log.error("discord adapter stopped", { reason, ...logged });
  }

  private send(conn: Connection, payload: unknown): void {
    try {
      conn.ws.send(JSON.stringify(payload));
    } catch (error) {
      this.options.log.warn("discord gateway send failed", { error: describeError(error) });
    }
  }

  private timer(conn: Connection, ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      conn.timers.delete(timer);
      fn();
    }, ms);
    conn.timers.add(timer);
  }

  /** Sleep unless stopped; false when stopped. */
  private async wait(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.sleepFn(ms, signal);
    } catch {
      return false;
    }
    return !signal.aborted;
  }
}
