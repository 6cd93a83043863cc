/**
 * The WebSocket half of the Discord fake: a Gateway v10 server speaking the
 * documented opcodes and payloads (Discord's developer docs, "Gateway"). Every connection gets
 * Hello; Heartbeat is answered with Heartbeat ACK (unless told not to);
 * Identify checks the token (4004) and the privileged intent (4014), spends a
 * session start, and answers READY then GUILD_CREATE; Resume on a known
 * session replays the events after its `seq` and answers RESUMED, else op 9
 * false. Dispatches carry increasing `s` per session and are kept, so a
 * client that was away gets them on resume. Tests drive the rest: close with
 * any code, drop the TCP connection, send op 1, 7 or 9, stop acknowledging.
 */
import type { ServerWebSocket } from "bun";
import { GatewayCloseCodes, GatewayIntentBits, GatewayOpcodes } from "discord-api-types/v10";
import { waitFor } from "../recorder.ts";
import { guildCreate, ready } from "./builders.ts";

/** One payload, as sent or received. */
export interface GatewayFrame {
  op: number;
  d: unknown;
  s?: number | null;
  t?: string | null;
}

export interface FakeConnection {
  id: number;
  /** `/gateway` (from GET /gateway/bot) or `/resume` (the session's resume_gateway_url). */
  path: string;
  query: Record<string, string>;
  /** Frames the client sent, with when each arrived. */
  received: Array<GatewayFrame & { at: number }>;
  sent: GatewayFrame[];
  openedAt: number;
  closed?: { code: number; reason: string; by: "client" | "server" };
  session?: FakeSession;
  ws: ServerWebSocket<ConnectionData>;
}

export interface FakeSession {
  id: string;
  seq: number;
  events: Array<{ s: number; t: string; d: unknown }>;
  conn?: FakeConnection;
}

export interface ConnectionData {
  path: string;
  query: Record<string, string>;
  conn?: FakeConnection;
}

export interface SessionStartLimit {
  total: number;
  remaining: number;
  reset_after: number;
  max_concurrency: number;
}

export class FakeGateway {
  /** What Hello announces, ms (Discord's is about 41 s). */
  heartbeatInterval = 41_250;
  /** False: heartbeats go unanswered, as on a zombie connection. */
  ackHeartbeats = true;
  /** False: Identify with the Message Content intent is closed with 4014, as for a bot without it enabled. */
  messageContentAllowed = true;
  /** True: every Resume is answered op 9 d:false (the session expired). */
  invalidateResumes = false;
  readonly sessionStartLimit: SessionStartLimit = { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 };
  readonly connections: FakeConnection[] = [];
  readonly sessions = new Map<string, FakeSession>();
  private latest: FakeSession | undefined;
  private readonly identifyCloses: Array<{ code: number; reason: string }> = [];
  private nextConnId = 1;

  constructor(
    private readonly token: () => string,
    private readonly resumeUrl: () => string,
  ) {}

  /** Close the next Identify with this code instead of answering READY. */
  closeNextIdentify(code: number, reason = "closed by the fake"): void {
    this.identifyCloses.push({ code, reason });
  }

  /** The newest connection that is still open. */
  current(): FakeConnection | undefined {
    return this.connections.findLast((c) => !c.closed);
  }

  /** Send a dispatch on the latest session (kept for replay); returns its sequence number. */
  dispatch(t: string, d: unknown): number {
    const session = this.latest;
    if (!session) throw new Error("fake gateway: no session yet (the client has not identified)");
    const s = ++session.seq;
    session.events.push({ s, t, d });
    if (session.conn && !session.conn.closed) this.send(session.conn, { op: GatewayOpcodes.Dispatch, d, s, t });
    return s;
  }

  /** Send any payload on the current connection (op 1, 7, 9…). */
  sendRaw(frame: GatewayFrame): void {
    const conn = this.current();
    if (!conn) throw new Error("fake gateway: no open connection");
    this.send(conn, frame);
  }

  /** Close the current connection from the server side with `code`. */
  closeCurrent(code: number, reason = ""): void {
    const conn = this.current();
    if (!conn) throw new Error("fake gateway: no open connection");
    conn.closed = { code, reason, by: "server" };
    conn.ws.close(code, reason);
  }

  /** Cut the current connection without a close frame (what a network failure looks like). */
  drop(): void {
    const conn = this.current();
    if (!conn) throw new Error("fake gateway: no open connection");
    conn.closed = { code: 1006, reason: "dropped by the fake", by: "server" };
    conn.ws.terminate();
  }

  /** Frames of one opcode the client sent, over all connections. */
  framesSent(op: number): Array<GatewayFrame & { at: number; conn: number }> {
    return this.connections.flatMap((c) => c.received.filter((f) => f.op === op).map((f) => ({ ...f, conn: c.id })));
  }

  waitForConnections(count: number, timeoutMs = 5000): Promise<FakeConnection[]> {
    return waitFor(() => (this.connections.length >= count ? this.connections : undefined), { timeoutMs, what: `${count} gateway connection(s)` });
  }

  /** Wait for a frame of `op` from the client (matching `match`), on any connection. */
  waitForFrame(
    op: number,
    match: (f: GatewayFrame, conn: FakeConnection) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<GatewayFrame & { conn: FakeConnection }> {
    return waitFor(
      () => {
        for (const conn of this.connections) {
          const frame = conn.received.find((f) => f.op === op && match(f, conn));
          if (frame) return { ...frame, conn };
        }
        return undefined;
      },
      { timeoutMs, what: `a gateway frame with op ${op}` },
    );
  }

  /** Wait until the client's latest session is attached to an open connection that got READY or RESUMED. */
  waitForLive(timeoutMs = 5000): Promise<FakeConnection> {
    return waitFor(
      () => {
        const conn = this.current();
        return conn?.session && conn.sent.some((f) => f.t === "READY" || f.t === "RESUMED") ? conn : undefined;
      },
      { timeoutMs, what: "a live gateway session" },
    );
  }

  // — Bun.serve websocket handlers —

  open(ws: ServerWebSocket<ConnectionData>): void {
    const conn: FakeConnection = { id: this.nextConnId++, path: ws.data.path, query: ws.data.query, received: [], sent: [], openedAt: Date.now(), ws };
    ws.data.conn = conn;
    this.connections.push(conn);
    this.send(conn, { op: GatewayOpcodes.Hello, d: { heartbeat_interval: this.heartbeatInterval } });
  }

  message(ws: ServerWebSocket<ConnectionData>, raw: string | Buffer): void {
    const conn = ws.data.conn;
    if (!conn || conn.closed) return;
    let frame: GatewayFrame;
    try {
      frame = JSON.parse(String(raw)) as GatewayFrame;
    } catch {
      this.serverClose(conn, GatewayCloseCodes.DecodeError, "Error while decoding payload.");
      return;
    }
    conn.received.push({ ...frame, at: Date.now() });
    switch (frame.op) {
      case GatewayOpcodes.Heartbeat:
        if (this.ackHeartbeats) this.send(conn, { op: GatewayOpcodes.HeartbeatAck, d: null });
        return;
      case GatewayOpcodes.Identify:
        this.identify(conn, frame.d as { token?: string; intents?: number });
        return;
      case GatewayOpcodes.Resume:
        this.resume(conn, frame.d as { token?: string; session_id?: string; seq?: number });
        return;
      default:
        this.serverClose(conn, GatewayCloseCodes.UnknownOpcode, "Unknown opcode.");
    }
  }

  close(ws: ServerWebSocket<ConnectionData>, code: number, reason: string): void {
    const conn = ws.data.conn;
    if (!conn) return;
    conn.closed ??= { code, reason, by: "client" };
    if (conn.session?.conn === conn) conn.session.conn = undefined;
  }

  private identify(conn: FakeConnection, d: { token?: string; intents?: number }): void {
    const refusal = this.identifyRefusal(conn, d);
    if (refusal) {
      this.serverClose(conn, refusal.code, refusal.reason);
      return;
    }
    this.sessionStartLimit.remaining = Math.max(0, this.sessionStartLimit.remaining - 1);
    const session: FakeSession = { id: crypto.randomUUID().replace(/-/g, ""), seq: 0, events: [], conn };
    this.sessions.set(session.id, session);
    this.latest = session;
    conn.session = session;
    this.dispatch("READY", ready(session.id, this.resumeUrl()));
    this.dispatch("GUILD_CREATE", guildCreate());
  }

  /** The close an identify gets instead of a session, in the order Discord checks (a scripted close is used up here); none when it is accepted. */
  private identifyRefusal(conn: FakeConnection, d: { token?: string; intents?: number }): { code: number; reason: string } | undefined {
    if (conn.session) return { code: GatewayCloseCodes.AlreadyAuthenticated, reason: "You sent more than one identify payload." };
    if (d?.token !== this.token()) return { code: GatewayCloseCodes.AuthenticationFailed, reason: "Authentication failed." };
    const scripted = this.identifyCloses.shift();
    if (scripted) return scripted;
    if (typeof d.intents !== "number") return { code: GatewayCloseCodes.InvalidIntents, reason: "Invalid intent(s)." };
    if ((d.intents & GatewayIntentBits.MessageContent) !== 0 && !this.messageContentAllowed) {
      return { code: GatewayCloseCodes.DisallowedIntents, reason: "Disallowed intent(s)." };
    }
    return undefined;
  }

  private resume(conn: FakeConnection, d: { token?: string; session_id?: string; seq?: number }): void {
    if (d?.token !== this.token()) {
      this.serverClose(conn, GatewayCloseCodes.AuthenticationFailed, "Authentication failed.");
      return;
    }
    const session = this.sessions.get(String(d.session_id));
    if (!session || this.invalidateResumes) {
      this.send(conn, { op: GatewayOpcodes.InvalidSession, d: false });
      return;
    }
    if (typeof d.seq !== "number" || d.seq > session.seq) {
      this.serverClose(conn, GatewayCloseCodes.InvalidSeq, "Invalid seq.");
      return;
    }
    if (session.conn && !session.conn.closed) this.serverClose(session.conn, GatewayCloseCodes.SessionTimedOut, "Session resumed elsewhere.");
    session.conn = conn;
    conn.session = session;
    this.latest = session;
    for (const event of session.events.filter((e) => e.s > (d.seq as number))) {
      this.send(conn, { op: GatewayOpcodes.Dispatch, d: event.d, s: event.s, t: event.t });
    }
    this.dispatch("RESUMED", {});
  }

  private serverClose(conn: FakeConnection, code: number, reason: string): void {
    conn.closed = { code, reason, by: "server" };
    conn.ws.close(code, reason);
  }

  private send(conn: FakeConnection, frame: GatewayFrame): void {
    const full = { op: frame.op, d: frame.d, s: frame.s ?? null, t: frame.t ?? null };
    conn.sent.push(full);
    conn.ws.send(JSON.stringify(full));
  }
}
