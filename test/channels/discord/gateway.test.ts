/**
 * The Discord gateway client against the fake gateway on loopback: the
 * handshake, heartbeats, every way a connection ends (drop, zombie, op 7,
 * op 9 both ways, each close code) and what comes after it, the session
 * start limit, backoff, and "taken in" meaning handled.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { GatewayOpcodes } from "discord-api-types/v10";
import type { GatewayClient } from "../../../src/channels/discord/gateway.ts";
import { DiscordStateStore } from "../../../src/channels/discord/session.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { DISCORD_BOT, type DiscordFake, type GatewayFrame, startDiscordFake } from "../../fakes/discord.ts";
import { eventually, gatewayClient } from "./harness.ts";

let fake: DiscordFake;
const clients: GatewayClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.stop();
  await fake?.stop();
});

function start(opts: Parameters<typeof gatewayClient>[1] = {}) {
  const made = gatewayClient(fake, opts);
  clients.push(made.client);
  made.client.start();
  return made;
}

const resumeFrames = () => fake.gateway.framesSent(GatewayOpcodes.Resume) as Array<GatewayFrame & { d: { session_id: string; seq: number; token: string } }>;
const identifyFrames = () => fake.gateway.framesSent(GatewayOpcodes.Identify);
/**
 * After the client stopped for good: the test's sleep holds every wait to
 * 5 ms of real time (recordingSleep), so a reconnect that should not happen
 * would open a connection well within this window.
 */
const NO_RECONNECT_MS = 150;

describe("connecting", () => {
  test("GET /gateway/bot, then Hello → Identify with the four intents → READY: ready, with the socket up", async () => {
    fake = startDiscordFake();
    const { client, seen } = start();
    const conn = await fake.gateway.waitForLive();
    const [gatewayBot] = fake.calls("gateway.bot");
    expect(gatewayBot!.headers.authorization).toBe(`Bot ${fake.token}`);
    expect(conn.path).toBe("/gateway");
    expect(conn.query).toEqual({ v: "10", encoding: "json" });
    const identify = identifyFrames()[0]!;
    // Guilds (1) + GuildMessages (512) + DirectMessages (4096) + MessageContent (32768).
    expect(identify.d).toMatchObject({ token: fake.token, intents: 37377, properties: { browser: "fermix", device: "fermix" } });
    await eventually(() => client.state().status === "ready", 2000, "ready");
    expect(client.state()).toEqual({ status: "ready", process_alive: true });
    expect(seen.map((e) => e.t)).toEqual(["READY", "GUILD_CREATE"]);
    expect((seen[0]!.d as { user: { id: string } }).user.id).toBe(DISCORD_BOT.id);
  });

  test("a used-up session start limit is waited out (reset_after) before identifying", async () => {
    fake = startDiscordFake();
    fake.gateway.sessionStartLimit.remaining = 0;
    fake.gateway.sessionStartLimit.reset_after = 7_200_000;
    let sawDetail = "";
    const made = gatewayClient(fake, {
      sleep: async (ms) => {
        made.waits.push(ms);
        sawDetail = made.client.state().detail ?? "";
        fake.gateway.sessionStartLimit.remaining = 999;
      },
    });
    clients.push(made.client);
    made.client.start();
    await fake.gateway.waitForLive();
    expect(made.waits).toContain(7_200_000);
    expect(sawDetail).toContain("session start limit");
    expect(fake.calls("gateway.bot")).toHaveLength(2);
    expect(identifyFrames()).toHaveLength(1);
  });

  test("a bot token Discord rejects on GET /gateway/bot stops the adapter, with no gateway connection", async () => {
    fake = startDiscordFake();
    const made = gatewayClient(fake, {});
    fake.rest.faults.add("gateway.bot", { status: 401, body: { message: "401: Unauthorized", code: 0 } });
    clients.push(made.client);
    made.client.start();
    await eventually(() => made.client.state().status === "failed", 2000, "failed");
    expect(made.client.state().detail).toContain("rejected the bot token");
    await Bun.sleep(NO_RECONNECT_MS);
    expect(fake.gateway.connections).toHaveLength(0);
    expect(fake.calls("gateway.bot")).toHaveLength(1);
  });
});

describe("heartbeats", () => {
  test("the first beat comes after interval × jitter, then one per interval, carrying the last sequence number; each is ACKed", async () => {
    fake = startDiscordFake();
    fake.gateway.heartbeatInterval = 1000;
    // jitter 0.2: the first beat ~200 ms after Hello, well before the 1,000 ms interval.
    start({ random: () => 0.2 });
    const conn = await fake.gateway.waitForLive();
    const beats = await eventually(
      () =>
        conn.received.filter((f) => f.op === GatewayOpcodes.Heartbeat).length >= 2 ? conn.received.filter((f) => f.op === GatewayOpcodes.Heartbeat) : null,
      3000,
      "two beats",
    );
    const first = beats[0]!.at - conn.openedAt;
    expect(first).toBeGreaterThanOrEqual(180);
    expect(first).toBeLessThan(900);
    expect(beats[1]!.at - beats[0]!.at).toBeGreaterThanOrEqual(900);
    // READY was s=1, GUILD_CREATE s=2.
    expect(beats[1]!.d).toBe(2);
    expect(conn.sent.filter((f) => f.op === GatewayOpcodes.HeartbeatAck).length).toBeGreaterThanOrEqual(2);
    expect(conn.closed).toBeUndefined();
  });

  test("op 1 from the gateway is answered with a heartbeat at once", async () => {
    fake = startDiscordFake();
    start();
    const conn = await fake.gateway.waitForLive();
    expect(conn.received.some((f) => f.op === GatewayOpcodes.Heartbeat)).toBe(false);
    fake.gateway.sendRaw({ op: GatewayOpcodes.Heartbeat, d: null });
    const beat = await fake.gateway.waitForFrame(GatewayOpcodes.Heartbeat, () => true, 1000);
    expect(beat.d).toBe(2);
  });

  test("a beat with the previous one unacknowledged is a zombie connection: closed (not 1000) and resumed", async () => {
    fake = startDiscordFake();
    fake.gateway.heartbeatInterval = 100;
    const { client, lines } = start({ random: () => 0 });
    const first = await fake.gateway.waitForLive();
    fake.gateway.ackHeartbeats = false;
    const resume = await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
    expect(first.closed).toMatchObject({ by: "client" });
    expect(first.closed!.code).not.toBe(1000);
    expect(first.closed!.code).not.toBe(1001);
    expect(resume.conn.path).toBe("/resume");
    expect(resume.d).toEqual({ token: fake.token, session_id: first.session!.id, seq: 2 });
    expect(lines.join("\n")).toContain("zombie");
    fake.gateway.ackHeartbeats = true;
    await eventually(() => client.state().status === "ready", 2000, "ready again");
    expect(identifyFrames()).toHaveLength(1);
  });
});

describe("reconnecting", () => {
  test("after a dropped connection it resumes on resume_gateway_url, and what was sent meanwhile is replayed once", async () => {
    fake = startDiscordFake();
    const { client, seen } = start();
    const first = await fake.gateway.waitForLive();
    fake.userMessage("before the drop");
    await eventually(() => seen.some((e) => e.t === "MESSAGE_CREATE"), 2000, "first message");
    fake.gateway.drop();
    fake.userMessage("while away");
    const resume = await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
    expect(resume.conn.path).toBe("/resume");
    expect(resume.conn.query).toEqual({ v: "10", encoding: "json" });
    expect(resume.d).toMatchObject({ session_id: first.session!.id, seq: 3 });
    await eventually(() => seen.some((e) => e.t === "RESUMED"), 2000, "RESUMED");
    const texts = seen.filter((e) => e.t === "MESSAGE_CREATE").map((e) => (e.d as { content: string }).content);
    expect(texts).toEqual(["before the drop", "while away"]);
    expect(client.state().status).toBe("ready");
    expect(identifyFrames()).toHaveLength(1);
  });

  test("op 7 Reconnect: the client closes resumably and resumes", async () => {
    fake = startDiscordFake();
    start();
    const first = await fake.gateway.waitForLive();
    fake.gateway.sendRaw({ op: GatewayOpcodes.Reconnect, d: null });
    const resume = await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
    expect(first.closed).toMatchObject({ by: "client" });
    expect([1000, 1001]).not.toContain(first.closed!.code);
    expect(resume.d).toMatchObject({ session_id: first.session!.id });
    expect(identifyFrames()).toHaveLength(1);
  });

  test("op 9 with d:true resumes the session", async () => {
    fake = startDiscordFake();
    start();
    const first = await fake.gateway.waitForLive();
    fake.gateway.sendRaw({ op: GatewayOpcodes.InvalidSession, d: true });
    const resume = await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
    expect(resume.d).toMatchObject({ session_id: first.session!.id });
    expect(identifyFrames()).toHaveLength(1);
  });

  test("op 9 with d:false waits 1–5 s, then identifies anew on the gateway URL (a new session)", async () => {
    fake = startDiscordFake();
    const { client, waits } = start({ random: () => 0.5 });
    const first = await fake.gateway.waitForLive();
    fake.gateway.sendRaw({ op: GatewayOpcodes.InvalidSession, d: false });
    await eventually(() => identifyFrames().length === 2, 3000, "a second identify");
    expect(resumeFrames()).toHaveLength(0);
    const second = fake.gateway.connections.at(-1)!;
    expect(second.path).toBe("/gateway");
    expect(waits.some((ms) => ms >= 1000 && ms <= 5000)).toBe(true);
    await eventually(() => client.state().status === "ready", 2000, "ready");
    expect(fake.gateway.current()!.session!.id).not.toBe(first.session!.id);
  });

  test("a resume the gateway refuses (op 9 false) falls back to Identify", async () => {
    fake = startDiscordFake();
    const { client } = start();
    await fake.gateway.waitForLive();
    fake.gateway.invalidateResumes = true;
    fake.gateway.drop();
    await eventually(() => identifyFrames().length === 2, 4000, "a second identify");
    expect(resumeFrames()).toHaveLength(1);
    await eventually(() => client.state().status === "ready", 2000, "ready");
  });

  test.each([
    [4000, "resume"],
    [4002, "resume"],
    [4008, "resume"],
    [4001, "identify"],
    [4003, "identify"],
    [4005, "identify"],
    [4007, "identify"],
    [4009, "identify"],
  ] as const)("close code %d from the gateway: %s", async (code, next) => {
    fake = startDiscordFake();
    start();
    await fake.gateway.waitForLive();
    fake.gateway.closeCurrent(code, "scripted");
    if (next === "resume") {
      await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
      expect(identifyFrames()).toHaveLength(1);
    } else {
      await eventually(() => identifyFrames().length === 2, 3000, "a second identify");
      expect(resumeFrames()).toHaveLength(0);
    }
  });

  test("reconnects back off: jittered, growing, capped; the count resets once a connection is acknowledged", async () => {
    fake = startDiscordFake();
    // Every identify is closed with 4000 (worth retrying): the client keeps trying, waiting longer each time.
    for (let i = 0; i < 5; i++) fake.gateway.closeNextIdentify(4000);
    fake.gateway.heartbeatInterval = 100;
    const { client, waits } = start({ backoff: { baseMs: 100, maxMs: 500 }, random: () => 0.5 });
    await eventually(() => client.state().status === "ready", 5000, "ready after five failures");
    // Identify is also spaced by max_concurrency (one per 5 s): those waits are the ~5,000 ones.
    const backoffs = () => waits.filter((ms) => ms < 1000);
    expect(waits.filter((ms) => ms >= 1000).every((ms) => ms > 4000 && ms <= 5000)).toBe(true);
    // attempt 0: up to base (50); then half to all of base·2^n: 150, 300, 375 (capped at 500), 375.
    expect(backoffs()).toEqual([50, 150, 300, 375, 375]);
    expect(identifyFrames()).toHaveLength(6);
    // Healthy again (a heartbeat ACKed): the next drop starts the count from the beginning.
    const live = fake.gateway.current()!;
    await eventually(() => live.sent.some((f) => f.op === GatewayOpcodes.HeartbeatAck), 2000, "an ACK");
    fake.gateway.drop();
    await eventually(() => backoffs().length === 6, 2000, "the next wait");
    expect(backoffs()[5]).toBe(50);
  });
});

describe("close codes that no reconnect can fix", () => {
  const cases: Array<[number, string]> = [
    [4004, "rejected the bot token"],
    [4010, "shard"],
    [4011, "sharding"],
    [4012, "gateway v10"],
    [4013, "intents"],
    [4014, "enable the Message Content intent for this bot in the Developer Portal"],
  ];
  test.each(cases)("%d stops the adapter with a reason a person can act on, and nothing reconnects", async (code, reason) => {
    fake = startDiscordFake();
    fake.gateway.closeNextIdentify(code, "fatal");
    const { client, lines } = start();
    await eventually(() => client.state().status === "failed", 3000, "failed");
    expect(client.state()).toEqual({ status: "failed", process_alive: false, detail: expect.stringContaining(reason) });
    expect(client.state().detail).toContain(String(code));
    await Bun.sleep(NO_RECONNECT_MS);
    expect(fake.gateway.connections).toHaveLength(1);
    expect(fake.calls("gateway.bot")).toHaveLength(1);
    expect(lines.join("\n")).toContain("discord adapter stopped");
  });

  test("4014 for real: the fake refuses the Message Content intent the way Discord does", async () => {
    fake = startDiscordFake();
    fake.gateway.messageContentAllowed = false;
    const { client } = start();
    await eventually(() => client.state().status === "failed", 3000, "failed");
    expect(fake.gateway.connections[0]!.closed).toMatchObject({ code: 4014, by: "server" });
    expect(client.state().detail).toContain("enable the Message Content intent for this bot in the Developer Portal");
  });
});

describe("taking events in", () => {
  test("an event whose handler fails is not acknowledged: the client resumes from the one before and the gateway replays it", async () => {
    fake = startDiscordFake();
    let failOnce = true;
    const { seen } = start({
      handle: (t) => {
        if (t === "MESSAGE_CREATE" && failOnce) {
          failOnce = false;
          throw new Error("inbox full");
        }
      },
    });
    await fake.gateway.waitForLive();
    fake.userMessage("keep me");
    const resume = await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
    // READY (1) and GUILD_CREATE (2) were taken in; the message (3) was not.
    expect(resume.d).toMatchObject({ seq: 2 });
    await eventually(() => seen.some((e) => e.t === "MESSAGE_CREATE"), 3000, "the replayed message");
    expect(seen.filter((e) => e.t === "MESSAGE_CREATE").map((e) => e.seq)).toEqual([3]);
  });

  test("stop() closes resumably and keeps the session, so the next start resumes it with the last sequence number", async () => {
    fake = startDiscordFake();
    const db = openDatabase(":memory:");
    const store = new DiscordStateStore(db, fake.token);
    const first = gatewayClient(fake, { store });
    first.client.start();
    const conn = await fake.gateway.waitForLive();
    await first.client.stop();
    expect(first.client.state()).toEqual({ status: "failed", process_alive: false, detail: "stopped" });
    await eventually(() => conn.closed, 1000, "closed");
    expect(conn.closed).toMatchObject({ by: "client" });
    expect([1000, 1001]).not.toContain(conn.closed!.code);
    expect(store.loadSession()).toMatchObject({ sessionId: conn.session!.id, seq: 2 });

    fake.userMessage("sent while Fermix was down");
    const second = gatewayClient(fake, { store });
    second.client.start();
    const resume = await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
    expect(resume.conn.path).toBe("/resume");
    expect(resume.d).toMatchObject({ session_id: conn.session!.id, seq: 2 });
    await eventually(() => second.seen.some((e) => e.t === "MESSAGE_CREATE"), 2000, "the replayed message");
    expect(identifyFrames()).toHaveLength(1);
    await second.client.stop();
    db.close();
  });
});
