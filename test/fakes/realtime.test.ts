/**
 * The realtime fake itself, driven by a bare WebSocket client: it refuses a
 * wrong key as the service does, answers a turn with the documented events,
 * and — what the tests that lean on it need most — notices when a client
 * sends something the documentation does not allow.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { until } from "../helpers/wait.ts";
import { type RealtimeFake, respond, startRealtimeFake, tone } from "./realtime.ts";

const KEY = "sk-realtime-fake-test";
let fake: RealtimeFake;
afterEach(() => fake?.stop());

const GOOD_SESSION = {
  type: "realtime",
  instructions: "Be brief.",
  output_modalities: ["audio"],
  audio: {
    input: { format: { type: "audio/pcm", rate: 24000 }, turn_detection: null, transcription: { model: "gpt-4o-mini-transcribe" } },
    output: { format: { type: "audio/pcm", rate: 24000 }, voice: "marin" },
  },
  tools: [{ type: "function", name: "list_jobs", description: "List jobs.", parameters: { type: "object", properties: {} } }],
};

/** A client on the fake: what it received, and a way to send. */
async function client(key = KEY) {
  const url = `${fake.url.replace("http", "ws")}/realtime?model=gpt-realtime`;
  const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${key}` } });
  const received: Array<Record<string, unknown>> = [];
  ws.addEventListener("message", (e) => received.push(JSON.parse(String(e.data))));
  const opened = await new Promise<boolean>((resolve) => {
    ws.addEventListener("open", () => resolve(true));
    ws.addEventListener("error", () => resolve(false));
  });
  const send = (event: Record<string, unknown>) => ws.send(JSON.stringify(event));
  const types = () => received.map((e) => e.type as string);
  const waitFor = (type: string, count = 1) => until(`${count} × ${type}`, () => types().filter((t) => t === type).length >= count, 5000);
  return { ws, opened, received, send, types, waitFor };
}

describe("the realtime fake", () => {
  test("refuses a wrong key with 401 before any session, and opens one with session.created for the right key", async () => {
    fake = await startRealtimeFake({ apiKey: KEY });
    expect((await client("sk-wrong")).opened).toBe(false);
    const good = await client();
    expect(good.opened).toBe(true);
    await good.waitFor("session.created");
    expect(fake.sessions[0]!.model).toBe("gpt-realtime");
    expect(fake.sessions[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  test("a manual turn: committed audio is transcribed; response.create gets a streamed function call, its output gets speech", async () => {
    fake = await startRealtimeFake({ apiKey: KEY });
    fake.script({
      heard: "what is planned",
      responses: [respond.call("list_jobs", { all: true }), respond.say("Nothing is planned today.", { audioMs: 300 })],
    });
    const c = await client();
    c.send({ type: "session.update", session: GOOD_SESSION });
    await c.waitFor("session.updated");
    const audio = tone(200);
    c.send({ type: "input_audio_buffer.append", audio: Buffer.from(audio).toString("base64") });
    c.send({ type: "input_audio_buffer.commit" });
    await c.waitFor("conversation.item.input_audio_transcription.completed");
    c.send({ type: "response.create" });
    await c.waitFor("response.done");
    const call = c.received.find((e) => e.type === "response.function_call_arguments.done")!;
    expect(call).toMatchObject({ name: "list_jobs", arguments: '{"all":true}' });
    c.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: call.call_id, output: "no jobs" } });
    c.send({ type: "response.create" });
    await c.waitFor("response.done", 2);
    const deltas = c.received.filter((e) => e.type === "response.output_audio.delta");
    expect(deltas.length).toBe(3);
    expect(Buffer.concat(deltas.map((d) => Buffer.from(d.delta as string, "base64"))).byteLength).toBe(300 * 48);
    const transcript = c.received.filter((e) => e.type === "response.output_audio_transcript.delta").map((e) => e.delta);
    expect(transcript.join("")).toBe("Nothing is planned today.");
    expect(fake.sessions[0]!.audio()).toEqual(audio);
    expect(fake.sessions[0]!.outputs).toEqual([{ callId: call.call_id as string, name: "list_jobs", output: "no jobs" }]);
    expect(fake.violations).toEqual([]);
  });

  test("with server turn detection, enough audio is a turn: speech, a commit and the response follow without a response.create", async () => {
    fake = await startRealtimeFake();
    fake.script({ heard: "hello", responses: [respond.say("Hi.")] });
    const c = await client();
    c.send({
      type: "session.update",
      session: { ...GOOD_SESSION, audio: { ...GOOD_SESSION.audio, input: { ...GOOD_SESSION.audio.input, turn_detection: { type: "server_vad" } } } },
    });
    await c.waitFor("session.updated");
    c.send({ type: "input_audio_buffer.append", audio: Buffer.from(tone(400)).toString("base64") });
    await c.waitFor("response.done");
    expect(c.types().slice(0, 6)).toEqual([
      "session.created",
      "session.updated",
      "input_audio_buffer.speech_started",
      "input_audio_buffer.speech_stopped",
      "input_audio_buffer.committed",
      "conversation.item.input_audio_transcription.completed",
    ]);
    expect(fake.violations).toEqual([]);
  });

  test("a held answer runs until cancelled; with bargeIn, audio over it is speech", async () => {
    fake = await startRealtimeFake();
    fake.script({ heard: "tell me a story", responses: [respond.say("Once upon a time.", { audioMs: 400, hold: true, bargeIn: true })] });
    const c = await client();
    c.send({ type: "session.update", session: GOOD_SESSION });
    await c.waitFor("session.updated");
    c.send({ type: "input_audio_buffer.append", audio: Buffer.from(tone(100)).toString("base64") });
    c.send({ type: "input_audio_buffer.commit" });
    c.send({ type: "response.create" });
    await c.waitFor("response.output_audio.delta", 4);
    c.send({ type: "input_audio_buffer.append", audio: Buffer.from(tone(400)).toString("base64") });
    await c.waitFor("input_audio_buffer.speech_started");
    const item = c.received.find((e) => e.type === "response.output_audio.delta")!.item_id as string;
    c.send({ type: "response.cancel" });
    c.send({ type: "conversation.item.truncate", item_id: item, content_index: 0, audio_end_ms: 150 });
    await c.waitFor("response.done");
    expect((c.received.find((e) => e.type === "response.done")!.response as { status: string }).status).toBe("cancelled");
    expect(fake.sessions[0]!.cancels).toBe(1);
    expect(fake.sessions[0]!.truncates).toEqual([{ itemId: item, audioEndMs: 150, sentMs: 400 }]);
    expect(fake.violations).toEqual([]);
  });

  test("what the documentation does not allow is a violation, named", async () => {
    fake = await startRealtimeFake();
    const c = await client();
    c.send({ type: "input_audio_buffer.append", audio: Buffer.from(tone(10)).toString("base64") });
    c.send({ type: "session.update", session: { ...GOOD_SESSION, type: "transcription", audio: { input: { format: { type: "audio/pcm", rate: 16000 } } } } });
    c.send({ type: "input_audio_buffer.append", audio: Buffer.from([1, 2, 3]).toString("base64") });
    c.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: "call_nope", output: "x" } });
    c.send({ type: "response.cancel" });
    c.send({ type: "conversation.item.truncate", item_id: "item_nope", content_index: 0, audio_end_ms: 5 });
    c.send({ type: "session.delete" });
    await until("seven violations", () => fake.violations.length >= 7, 5000);
    const text = fake.violations.join("\n");
    expect(text).toContain("audio appended before the session was set up");
    expect(text).toContain('session.type is "transcription"');
    expect(text).toContain('audio.input.format must be {type:"audio/pcm", rate:24000}');
    expect(text).toContain("an append of 3 bytes");
    expect(text).toContain("call_nope, which is no open call");
    expect(text).toContain("response.cancel with no response in progress");
    expect(text).toContain("truncate of item_nope");
    expect(text).toContain('unknown client event "session.delete"');
  });

  test("refuse() answers the next handshakes with a status; drop() closes a live session from the server's side", async () => {
    fake = await startRealtimeFake();
    fake.refuse(403);
    expect((await client()).opened).toBe(false);
    const c = await client();
    expect(c.opened).toBe(true);
    const closed = new Promise<number>((resolve) => c.ws.addEventListener("close", (e) => resolve(e.code)));
    await c.waitFor("session.created");
    fake.sessions[0]!.drop(1011);
    expect(await closed).toBe(1011);
  });
});
