/**
 * The voice desk and its sessions in-process, against the realtime fake:
 * what a companion hears, what the provider is sent, what the owner's
 * tools do, what history keeps, and how interruptions, refusals, drops,
 * time limits and a second companion go. (The compiled daemon with
 * `fermix talk` and the Talk page: test/e2e/talk.test.ts.)
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import type { PromptSection, TurnRequest } from "../../../src/agent/agent.ts";
import { defineTool, type Tool, type ToolContext } from "../../../src/agent/tools/types.ts";
import { type Companion, type CompanionLink, VoiceDesk, type VoiceDeskServices } from "../../../src/channels/realtime/desk.ts";
import type { CompanionEvent, CompanionRequest } from "../../../src/channels/realtime/protocol.ts";
import { connectUpstream } from "../../../src/channels/realtime/upstream.ts";
import { type RealtimeSettings, realtimeUrl } from "../../../src/config/realtime.ts";
import { createLogger } from "../../../src/kernel/log.ts";
import { Telemetry } from "../../../src/kernel/telemetry.ts";
import { ConversationStore } from "../../../src/store/conversations.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { IdempotencyStore } from "../../../src/store/idempotency.ts";
import { type RealtimeFake, respond, startRealtimeFake, tone } from "../../fakes/realtime.ts";
import { until } from "../../helpers/wait.ts";

const KEY = "sk-desk-test-key-0000";
const SOUL = "# Soul\n\nYou are Testy, the owner's assistant.";
const BOAT = "- The owner's boat is called Skylark (#1)";

let fake: RealtimeFake;
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
  fake?.stop();
});

interface Ran {
  name: string;
  args: Record<string, unknown>;
  ctx: ToolContext;
}

/** A desk on the fake with a real history store; `write_file` and `remember` stand for the owner's tools, `shiny` for a tool no row offers. */
async function setUp(options: { maxSessionMs?: number; key?: string; connect?: VoiceDeskServices["connect"] } = {}) {
  fake = await startRealtimeFake({ apiKey: KEY });
  const db = openDatabase(":memory:");
  cleanups.push(() => db.close());
  const conversations = new ConversationStore(db);
  const ran: Ran[] = [];
  const presses: string[] = [];
  const telemetry = new Telemetry();
  const tool = (name: string, answer: string): Tool =>
    defineTool({
      name,
      description: `${name} for the test`,
      parameters: Type.Object({ path: Type.Optional(Type.String()), fact: Type.Optional(Type.String()) }, { additionalProperties: false }),
      run: async (args, ctx) => {
        ran.push({ name, args, ctx });
        if (name === "remember") await ctx.say("🔐 **Access request**: approve?", [{ label: "✅ Approve", data: "fx:c:TOKEN" }]);
        return answer;
      },
    });
  const settings: RealtimeSettings = {
    provider: "voice",
    url: realtimeUrl({ base_url: fake.url }, "gpt-realtime"),
    apiKey: options.key ?? KEY,
    model: "gpt-realtime",
    voice: "cedar",
    instructionsExtra: "Answer in English.",
    maxSessionMs: options.maxSessionMs ?? 60_000,
  };
  const desk = new VoiceDesk({
    settings: () => settings,
    owner: () => "alice",
    conversations,
    soul: () => SOUL,
    // Memory comes up when the owner's words are about the boat, as the memory section finds facts by the words said.
    sections: (request: TurnRequest): PromptSection[] => (request.text.includes("boat") ? [{ title: "What you remember", body: BOAT }] : []),
    extraTools: () => [tool("write_file", "wrote notes.txt"), tool("remember", "remembered"), tool("shiny", "should never run")],
    workspace: "/tmp/fermix-test-workspace",
    idempotency: new IdempotencyStore(db),
    press: async (press) => {
      presses.push(`${press.senderId}:${press.data}`);
      return { ok: true, done: true, text: "Approved." };
    },
    log: createLogger({ FERMIX_LOG_LEVEL: "error" }),
    telemetry,
    ...(options.connect ? { connect: options.connect } : {}),
  });
  return { desk, conversations, ran, presses, telemetry };
}

/** A companion attached to the desk: what it was sent, and a way to ask. */
function companion(desk: VoiceDesk) {
  const events: CompanionEvent[] = [];
  let closed = false;
  const c: Companion = {
    send: (e) => void events.push(e),
    close: () => {
      closed = true;
    },
  };
  const link: CompanionLink = desk.attach(c);
  const of = <T extends CompanionEvent["type"]>(type: T) => events.filter((e): e is Extract<CompanionEvent, { type: T }> => e.type === type);
  return {
    events,
    send: (request: CompanionRequest) => link.handle(request),
    leave: () => link.detach(),
    closed: () => closed,
    of,
    waitFor: (type: CompanionEvent["type"], count = 1) => until(`${count} × ${type} at the companion`, () => of(type).length >= count, 5000),
  };
}

const speak = (ms: number) => ({ type: "audio", audio: Buffer.from(tone(ms)).toString("base64") }) as const;

describe("a voice session", () => {
  test("is set up with the owner's voice tools from the role table, SOUL.md and the voice settings", async () => {
    const { desk } = await setUp();
    const c = companion(desk);
    expect(c.events[0]).toEqual({ type: "hello", protocol: 1, audio: { format: "pcm16", rate: 24000, channels: 1 }, enabled: true });
    c.send({ type: "start", turn_detection: "manual", client: "the test" });
    await c.waitFor("ready");
    expect(c.of("ready")[0]).toMatchObject({
      conversation: "realtime:alice:",
      provider: "voice",
      model: "gpt-realtime",
      voice: "cedar",
      turn_detection: "manual",
    });
    const session = fake.sessions[0]!;
    expect(session.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(session.model).toBe("gpt-realtime");
    const update = session.updates[0]! as { instructions: string; tools: Array<{ name: string }>; audio: { output: { voice: string } } };
    // write_file, remember and send_attachment are the owner's in a voice turn; "shiny" has no row in the role table, so nobody gets it.
    expect(update.tools.map((t) => t.name).sort()).toEqual(["remember", "send_attachment", "write_file"]);
    expect(update.audio.output.voice).toBe("cedar");
    expect(update.instructions).toContain("You are Testy");
    expect(update.instructions).toContain("## Speaking");
    expect(update.instructions).toContain("Answer in English.");
    expect(desk.status()).toMatchObject({ activeSessions: 1, activeClients: 1, live: { client: "the test", conversation: "realtime:alice:" } });
    expect(fake.violations).toEqual([]);
  });

  test("a call made by voice runs the owner's tool in the voice conversation; both sides' words are kept, in order", async () => {
    const { desk, conversations, ran } = await setUp();
    fake.script({ heard: "write my notes down", responses: [respond.call("write_file", { path: "notes.txt" }), respond.say("Done, the notes are written.")] });
    const c = companion(desk);
    c.send({ type: "start", turn_detection: "manual" });
    await c.waitFor("ready");
    const spoken = tone(250);
    c.send({ type: "audio", audio: Buffer.from(spoken).toString("base64") });
    c.send({ type: "commit" });
    await c.waitFor("response_done");
    expect(fake.sessions[0]!.audio()).toEqual(spoken);
    expect(ran.map((r) => [r.name, r.args])).toEqual([["write_file", { path: "notes.txt" }]]);
    expect(ran[0]!.ctx).toMatchObject({ channel: "realtime", conversation: "realtime:alice:", senderId: "alice", role: "operator" });
    expect(fake.sessions[0]!.outputs).toEqual([expect.objectContaining({ name: "write_file", output: "wrote notes.txt" })]);
    expect(c.of("tool").map((t) => `${t.name}:${t.state}`)).toEqual(["write_file:running", "write_file:done"]);
    // The answer's audio reached the companion, as sent.
    const heard = Buffer.concat(c.of("audio").map((a) => Buffer.from(a.audio, "base64")));
    expect(heard.byteLength).toBe(600 * 48);
    expect(
      c
        .of("transcript")
        .filter((t) => t.final)
        .map((t) => `${t.role}: ${t.text}`),
    ).toEqual(["user: write my notes down", "assistant: Done, the notes are written."]);
    expect(conversations.history("realtime:alice:").map((m) => [m.role, m.text, m.sender?.trusted])).toEqual([
      ["user", "write my notes down", true],
      ["assistant", "Done, the notes are written.", undefined],
    ]);
    expect(c.of("response_done")).toEqual([{ type: "response_done", status: "completed" }]);
    expect(fake.violations).toEqual([]);
  });

  test("a tool the session was not offered is not run: the model is told there is no such tool", async () => {
    const { desk, ran } = await setUp();
    fake.script({ heard: "react with a thumbs up", responses: [respond.call("react", { emoji: "👍" }), respond.call("shiny", {}), respond.say("I can't.")] });
    const c = companion(desk);
    c.send({ type: "start", turn_detection: "manual" });
    await c.waitFor("ready");
    c.send(speak(100));
    c.send({ type: "commit" });
    await c.waitFor("response_done");
    expect(ran).toEqual([]);
    expect(fake.sessions[0]!.outputs.map((o) => o.output)).toEqual(["error: there is no tool named react", "error: there is no tool named shiny"]);
  });

  test("a notice with buttons reaches the companion; its press is answered on the confirmation path as the owner", async () => {
    const { desk, presses } = await setUp();
    fake.script({ heard: "remember this", responses: [respond.call("remember", { fact: "x" }), respond.say("Remembered.")] });
    const c = companion(desk);
    c.send({ type: "start", turn_detection: "manual" });
    await c.waitFor("ready");
    c.send(speak(100));
    c.send({ type: "commit" });
    await c.waitFor("notice");
    expect(c.of("notice")[0]).toEqual({ type: "notice", text: "🔐 **Access request**: approve?", buttons: [{ label: "✅ Approve", data: "fx:c:TOKEN" }] });
    c.send({ type: "press", data: "fx:c:TOKEN" });
    await c.waitFor("notice", 2);
    expect(presses).toEqual(["alice:fx:c:TOKEN"]);
    expect(c.of("notice")[1]!.text).toBe("Approved.");
  });

  test("new memories for what the owner said reach the session: its instructions are updated", async () => {
    const { desk } = await setUp();
    fake.script({ heard: "what is my boat called", responses: [respond.say("Skylark.")] });
    const c = companion(desk);
    c.send({ type: "start", turn_detection: "manual" });
    await c.waitFor("ready");
    expect(String(fake.sessions[0]!.updates[0]!.instructions)).not.toContain("Skylark");
    c.send(speak(100));
    c.send({ type: "commit" });
    await c.waitFor("response_done");
    await until("an instructions update", () => fake.sessions[0]!.updates.length >= 2, 5000);
    expect(String(fake.sessions[0]!.updates[1]!.instructions)).toContain(BOAT);
    expect(fake.violations).toEqual([]);
  });

  test("audio that is not whole PCM16 samples is refused at the desk and never sent on", async () => {
    const { desk } = await setUp();
    const c = companion(desk);
    c.send({ type: "start", turn_detection: "manual" });
    await c.waitFor("ready");
    c.send({ type: "audio", audio: Buffer.from([1, 2, 3]).toString("base64") });
    c.send({ type: "audio", audio: "not base64!" });
    expect(c.of("error").map((e) => e.code)).toEqual(["bad_audio", "bad_audio"]);
    expect(fake.sessions[0]!.events.filter((e) => e.type === "input_audio_buffer.append")).toEqual([]);
  });
});

describe("interrupting", () => {
  test("the companion's interrupt cancels the response, truncates the answer to what was heard, and keeps its words as cut", async () => {
    const { desk, conversations } = await setUp();
    fake.script({
      heard: "tell me everything",
      responses: [respond.say("This is a very long answer that goes on.", { audioMs: 2000, paceMs: 20, hold: true })],
    });
    const c = companion(desk);
    c.send({ type: "start", turn_detection: "manual" });
    await c.waitFor("ready");
    c.send(speak(100));
    c.send({ type: "commit" });
    await c.waitFor("audio", 3);
    c.send({ type: "interrupt", played_ms: 120 });
    await c.waitFor("response_done");
    const session = fake.sessions[0]!;
    expect(session.cancels).toBe(1);
    expect(session.truncates).toEqual([expect.objectContaining({ audioEndMs: 120 })]);
    expect(c.of("interrupted")).toHaveLength(1);
    expect(c.of("response_done")[0]!.status).toBe("cancelled");
    const kept = conversations.history("realtime:alice:");
    expect(kept[1]!.text).toEndWith("… [cut off]");
    expect(fake.violations).toEqual([]);
  });

  test("hands-free: new speech over an answer (the provider hears it) cancels the response and truncates it", async () => {
    const { desk } = await setUp();
    fake.script({
      heard: "tell me a story",
      responses: [respond.say("Once upon a time there was a boat.", { audioMs: 3000, paceMs: 30, hold: true, bargeIn: true })],
    });
    const c = companion(desk);
    c.send({ type: "start", turn_detection: "server" });
    await c.waitFor("ready");
    c.send(speak(400));
    await c.waitFor("audio", 2);
    c.send(speak(400));
    await c.waitFor("response_done");
    const session = fake.sessions[0]!;
    expect(c.of("speech_started").length).toBe(2);
    expect(session.cancels).toBe(1);
    expect(session.truncates).toHaveLength(1);
    expect(session.truncates[0]!.audioEndMs).toBeLessThanOrEqual(session.truncates[0]!.sentMs);
    expect(c.of("interrupted")).toHaveLength(1);
    expect(fake.violations).toEqual([]);
  });
});

describe("limits and faults", () => {
  test("a provider that refuses the session: the companion hears why in our words, and the desk keeps the fault until a session is up", async () => {
    const { desk } = await setUp({ key: "sk-wrong-key-000000" });
    const c = companion(desk);
    c.send({ type: "start" });
    await c.waitFor("ended");
    expect(c.of("error")[0]).toEqual({
      type: "error",
      code: "upstream_refused",
      message: "the realtime provider voice: the provider refused the key (HTTP 401); run `fermix doctor`",
    });
    expect(c.of("ended")[0]!.reason).toBe("upstream_refused");
    // The service's own words ("Incorrect API key provided") are for the log only.
    expect(JSON.stringify(c.events)).not.toContain("Incorrect API key");
    expect(desk.status()).toMatchObject({ activeSessions: 0, fault: expect.stringContaining("refused the key (HTTP 401)") });
  });

  test("a drop is told to the companion, which can start again; a session up again clears the fault", async () => {
    const { desk } = await setUp();
    const c = companion(desk);
    c.send({ type: "start" });
    await c.waitFor("ready");
    fake.sessions[0]!.drop(1011);
    await c.waitFor("ended");
    expect(c.of("ended")[0]).toMatchObject({ reason: "upstream_closed" });
    expect(desk.status()).toMatchObject({ activeSessions: 0, fault: "provider voice closed a live session (code 1011)" });
    c.send({ type: "start" });
    await c.waitFor("ready", 2);
    expect(desk.status().fault).toBeUndefined();
    expect(desk.status().activeSessions).toBe(1);
  });

  test("a second companion is refused while one talks, and may start once that session is over", async () => {
    const { desk } = await setUp();
    const first = companion(desk);
    first.send({ type: "start", client: "fermix talk" });
    await first.waitFor("ready");
    const second = companion(desk);
    second.send({ type: "start", client: "the Talk page" });
    expect(second.of("error")[0]).toMatchObject({ code: "busy", message: expect.stringContaining("fermix talk") });
    expect(desk.status()).toMatchObject({ activeSessions: 1, activeClients: 2 });
    second.send(speak(100));
    expect(second.of("error")[1]!.code).toBe("not_started");
    first.leave();
    await until("the first session to end", () => desk.status().activeSessions === 0, 5000);
    second.send({ type: "start", client: "the Talk page" });
    await second.waitFor("ready");
    expect(desk.status()).toMatchObject({ activeSessions: 1, activeClients: 1 });
  });

  test("a companion that leaves while its session is still connecting leaves no session open with the provider", async () => {
    let letThrough: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      letThrough = resolve;
    });
    const { desk } = await setUp({
      connect: async (url, key, handlers) => {
        await gate;
        return connectUpstream(url, key, handlers);
      },
    });
    const c = companion(desk);
    c.send({ type: "start" });
    c.leave();
    expect(desk.status()).toMatchObject({ activeSessions: 0, activeClients: 0 });
    letThrough();
    await until("the late connection opened and closed", () => fake.sessions.length === 1 && fake.sessions[0]!.closed, 5000);
    expect(fake.sessions[0]!.updates).toEqual([]);
    expect(c.of("ready")).toEqual([]);
  });

  test("max_session_minutes ends the session, saying so", async () => {
    const { desk } = await setUp({ maxSessionMs: 300 });
    const c = companion(desk);
    c.send({ type: "start" });
    await c.waitFor("ready");
    await c.waitFor("ended");
    expect(c.of("ended")[0]).toMatchObject({ reason: "time_limit", message: expect.stringContaining("max_session_minutes") });
    expect(fake.sessions[0]!.closed).toBe(true);
  });

  test("telemetry says when a session starts and ends (the status page updates on it)", async () => {
    const { desk, telemetry } = await setUp();
    const seen: string[] = [];
    telemetry.on("realtime.session", (e) => seen.push(`${e.metadata.phase}:${e.metadata.reason}`));
    const c = companion(desk);
    c.send({ type: "start", client: "the test" });
    await c.waitFor("ready");
    c.send({ type: "stop" });
    await c.waitFor("ended");
    expect(seen).toEqual(["started:the test", "ended:stopped"]);
  });
});
