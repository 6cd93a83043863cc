/**
 * Realtime voice through the compiled daemon, against the realtime fake:
 * `fermix talk` with a recording made by espeak-ng, the health report while
 * a companion talks and after, `/stop` and `/tasks` on a chat channel
 * during a voice session, interruption, a provider that refuses, and what
 * `fermix talk` says when it cannot work. (The Talk page in a browser:
 * talk-page.test.ts.)
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { readWav, wavToPcm } from "../../src/channels/realtime/pcm.ts";
import { reply } from "../fakes/model-server.ts";
import { respond, startRealtimeFake, tone } from "../fakes/realtime.ts";
import { ALICE } from "../fakes/telegram.ts";
import { ensureBinary, runFermix } from "../helpers/binary.ts";
import { connectCompanion } from "../helpers/companion.ts";
import { ACP_OFF, realtimeToml, TELEGRAM_OFF, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();
const VOICE_KEY = "sk-voice-e2e-key-0000000";
const OWNER = userInfo().username;
const VOICE_CONVERSATION = `realtime:${OWNER}:`;

/** A daemon with a text provider (the fake model), a voice provider (the realtime fake), and optionally Telegram with Alice as owner. */
async function setup(options: { telegram?: boolean; realtime?: boolean } = {}) {
  const model = await start.model();
  const voice = await startRealtimeFake({ apiKey: VOICE_KEY });
  start.defer(() => voice.stop());
  const telegram = options.telegram ? start.telegram() : undefined;
  const home = start.home();
  home.writeConfig(
    tomlTable("fermix_core.providers.fake", { base_url: model.url, model: "fake-model", primary: true }) +
      tomlTable("fermix_core.providers.voice", { base_url: voice.url, model: "unused-for-text", api_key: VOICE_KEY }) +
      realtimeToml({ enabled: options.realtime ?? true, provider: "voice", model: "gpt-realtime-test", voice: "cedar" }) +
      (telegram
        ? tomlTable("fermix_channels.telegram", { bot_token: telegram.token, api_root: telegram.url, owner_user_id: String(ALICE.id) })
        : TELEGRAM_OFF) +
      ACP_OFF,
  );
  const daemon = await start.daemon(home);
  const health = async () =>
    (await (await fetch(new URL("/health/ready", daemon.url))).json()) as Record<string, unknown> & { realtime: Record<string, unknown>; failures: string[] };
  return { model, voice, telegram, home, daemon, health };
}

/** Speech made here, the way a person's recording would come: espeak-ng's WAV (22,050 Hz), which `fermix talk` resamples. */
function speechWav(dir: string, words: string): string {
  const path = join(dir, "speech.wav");
  const made = Bun.spawnSync(["espeak-ng", "--stdout", words], { stdout: "pipe", stderr: "pipe" });
  if (made.exitCode !== 0) throw new Error(`espeak-ng failed (.ci/run installs it): ${made.stderr.toString()}`);
  writeFileSync(path, made.stdout);
  return path;
}

/** The voice conversation's history, as the database keeps it. */
function voiceHistory(home: string): Array<{ role: string; content: string; sender_trusted: number | null }> {
  const db = new Database(join(home, "fermix.db"), { readonly: true });
  try {
    return db.query("SELECT role, content, sender_trusted FROM messages WHERE conversation = ?1 ORDER BY id").all(VOICE_CONVERSATION) as Array<{
      role: string;
      content: string;
      sender_trusted: number | null;
    }>;
  } finally {
    db.close();
  }
}

test("fermix talk --input speech.wav --output answer.wav: the provider hears the recording, the answer lands in the file, both sides are in history, and a call made by voice ran with the owner's tools", async () => {
  const { voice, model, home } = await setup();
  const root = join(home.home, "..");
  const speech = speechWav(root, "Note that I need rope, and remember my boat is called Skylark.");
  voice.script({
    heard: "Note that I need rope, and remember my boat is called Skylark.",
    responses: [
      respond.call("write_file", { path: "voice-note.txt", content: "buy rope" }),
      respond.call("remember", { text: "The owner's boat is called Skylark" }),
      respond.say("Noted: rope, and your boat Skylark.", { audioMs: 800 }),
    ],
  });

  const answerPath = join(root, "answer.wav");
  const talk = await runFermix(["talk", "--input", speech, "--output", answerPath], home.env);
  expect({ code: talk.exitCode, stderr: talk.stderr }).toEqual({ code: 0, stderr: expect.stringContaining("wrote 0.8 s of answer") });
  expect(talk.stdout).toContain("You: Note that I need rope, and remember my boat is called Skylark.");
  expect(talk.stdout).toContain("Fermix: Noted: rope, and your boat Skylark.");

  const session = voice.sessions[0]!;
  // The provider got the recording, as 24 kHz PCM16: every sample of it, in order.
  const sent = wavToPcm(readFileSync(speech));
  expect(session.audio().byteLength).toBe(sent.byteLength);
  expect(Bun.hash(session.audio())).toBe(Bun.hash(sent));
  expect(session.model).toBe("gpt-realtime-test");
  const setupEvent = session.updates[0] as { instructions: string; tools: Array<{ name: string }>; audio: { output: { voice: string } } };
  const offered = setupEvent.tools.map((t) => t.name);
  expect(offered).toEqual(expect.arrayContaining(["read_file", "write_file", "edit_file", "remember", "request_access", "schedule"]));
  expect(offered).not.toContain("react");
  expect(setupEvent.instructions).toContain("You are Fermix");
  expect(setupEvent.audio.output.voice).toBe("cedar");

  // The answer's audio, as the provider sent it, is the file's.
  const answer = readWav(readFileSync(answerPath));
  expect({ rate: answer.rate, channels: answer.channels }).toEqual({ rate: 24_000, channels: 1 });
  expect(answer.samples.byteLength).toBe(tone(800).byteLength);
  expect(Bun.hash(new Uint8Array(answer.samples.buffer))).toBe(Bun.hash(tone(800)));

  // The owner's tools ran: a file in the workspace (only the owner may write there), a fact in the owner's memory.
  expect(readFileSync(join(home.home, "workspace", "voice-note.txt"), "utf8")).toBe("buy rope");
  expect(session.outputs.map((o) => [o.name, o.output])).toEqual([
    ["write_file", expect.stringContaining("voice-note.txt")],
    ["remember", expect.stringMatching(/^remembered as #\d+$/)],
  ]);
  expect(voiceHistory(home.home)).toEqual([
    { role: "user", content: "Note that I need rope, and remember my boat is called Skylark.", sender_trusted: 1 },
    { role: "assistant", content: "Noted: rope, and your boat Skylark.", sender_trusted: null },
  ]);
  expect(voice.violations).toEqual([]);

  // A later text turn of the owner's has the voice conversation and the memory made by voice.
  model.reply(reply.text("Skylark."));
  const ask = await runFermix(["ask", "what is my boat called, as I told you by voice?"], home.env);
  expect(ask.exitCode).toBe(0);
  const instructions = String(model.requests[0]!.body.instructions);
  expect(instructions).toContain("## Your latest voice conversation with your owner");
  expect(instructions).toContain("Owner: Note that I need rope, and remember my boat is called Skylark.");
  expect(instructions).toContain("You: Noted: rope, and your boat Skylark.");
  expect(instructions).toMatch(/## What you remember \(relevant to this message\)\n- The owner's boat is called Skylark/);
});

test("/health/ready shows the live session and the companion while one talks and zero after; /stop and /tasks on a chat channel leave the session running", async () => {
  const { voice, telegram, home, health } = await setup({ telegram: true });
  const companion = await connectCompanion(home.home);
  await companion.waitFor("hello");
  await until("the companion counted", async () => (await health()).realtime.active_clients === 1);
  expect((await health()).realtime).toMatchObject({ active_sessions: 0, "companion_connected?": true });

  companion.send({ type: "start", turn_detection: "manual", client: "a test companion" });
  await companion.waitFor("ready");
  const during = await health();
  expect(during.realtime).toEqual({
    enabled: true,
    status: "ready",
    provider: "voice",
    model: "gpt-realtime-test",
    socket_path: join(home.home, "realtime.sock"),
    socket_alive: true,
    active_sessions: 1,
    active_clients: 1,
    "companion_connected?": true,
  });

  telegram!.pushMessage(telegram!.message.text("/stop"));
  const stopped = await telegram!.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("Nothing was running")), 10_000);
  expect(stopped.find((t) => t.includes("Nothing was running"))).toContain("The live voice session goes on");
  telegram!.pushMessage(telegram!.message.text("/tasks"));
  const tasks = await telegram!.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("Voice session")), 10_000);
  expect(tasks.find((t) => t.includes("Voice session"))).toContain("through a test companion");

  // The session /stop left alone still answers: a whole turn through it, after the stop was answered.
  voice.script({ heard: "are you still there", responses: [respond.say("Still here.")] });
  companion.send({ type: "audio", audio: Buffer.from(tone(200)).toString("base64") });
  companion.send({ type: "commit" });
  await companion.waitFor("response_done");
  expect(companion.of("ended")).toEqual([]);
  expect(voice.sessions).toHaveLength(1);
  expect(voice.sessions[0]!.closed).toBe(false);
  expect((await health()).realtime.active_sessions).toBe(1);

  companion.close();
  await until("the session and the companion gone from health", async () => {
    const r = (await health()).realtime;
    return r.active_sessions === 0 && r.active_clients === 0 && r["companion_connected?"] === false;
  });
  await until("the upstream session closed", () => voice.sessions[0]!.closed);
  expect(voice.violations).toEqual([]);
});

test("interrupting: new speech while an answer plays cancels the upstream response and truncates what was not heard", async () => {
  const { voice, home } = await setup();
  voice.script({
    heard: "tell me a long story",
    responses: [respond.say("Once upon a time there was a very long story.", { audioMs: 4000, paceMs: 25, hold: true, bargeIn: true })],
  });
  const companion = await connectCompanion(home.home);
  companion.send({ type: "start", turn_detection: "server", client: "a test companion" });
  await companion.waitFor("ready");
  companion.send({ type: "audio", audio: Buffer.from(tone(400)).toString("base64") });
  await companion.waitFor("audio", 3);
  // The owner speaks over the answer.
  companion.send({ type: "audio", audio: Buffer.from(tone(400)).toString("base64") });
  await companion.waitFor("interrupted");
  await companion.waitFor("response_done");
  expect(companion.of("response_done")[0]!.status).toBe("cancelled");
  const session = voice.sessions[0]!;
  expect(session.cancels).toBe(1);
  expect(session.responses.at(-1)!.status).toBe("cancelled");
  expect(session.truncates).toHaveLength(1);
  expect(session.truncates[0]!.audioEndMs).toBeLessThan(session.truncates[0]!.sentMs);
  expect(voice.violations).toEqual([]);
  companion.close();
});

test("a provider that refuses the session degrades realtime in health with the reason; the next session that starts clears it", async () => {
  const { voice, home, health } = await setup();
  voice.refuse(401);
  const companion = await connectCompanion(home.home);
  companion.send({ type: "start" });
  await companion.waitFor("ended");
  expect(companion.of("error")[0]).toMatchObject({ code: "upstream_refused" });
  const refused = await health();
  expect(refused.status).toBe("degraded");
  expect(refused.realtime.status).toBe("degraded");
  expect(refused.failures).toContain("realtime: provider voice refused the session: the provider refused the key (HTTP 401); run `fermix doctor`");

  companion.send({ type: "start" });
  await companion.waitFor("ready");
  const again = await health();
  expect(again.realtime.status).toBe("ready");
  expect(again.failures.filter((f) => f.startsWith("realtime"))).toEqual([]);
  companion.close();
});

test("fermix talk says what is missing: no audio tool, no daemon listening, a file that is not a WAV", async () => {
  const home = start.home();
  const empty = join(home.home, "..");
  // No arecord, rec, aplay or play on this PATH.
  const bare = { ...home.env, PATH: empty };
  const noMic = await runFermix(["talk"], bare);
  expect(noMic.exitCode).toBe(1);
  expect(noMic.stderr).toContain("no microphone recorder found (arecord or rec): install alsa-utils or sox, or give a recording with --input FILE.wav");
  writeFileSync(join(empty, "q.wav"), Buffer.from("RIFF\0\0\0\0WAVEnothing here"));
  const noPlayer = await runFermix(["talk", "--input", join(empty, "q.wav")], bare);
  expect(noPlayer.stderr).toContain("no audio player found (aplay or play)");
  const notWav = await runFermix(["talk", "--input", join(empty, "q.wav"), "--output", join(empty, "a.wav")], bare);
  expect(notWav).toMatchObject({ exitCode: 1, stderr: expect.stringContaining("q.wav: the WAV file has no audio data") });
  const speech = speechWav(empty, "hello");
  const noDaemon = await runFermix(["talk", "--input", speech, "--output", join(empty, "a.wav")], bare);
  expect(noDaemon).toMatchObject({ exitCode: 1, stderr: expect.stringContaining("realtime voice is not listening: start the daemon with `fermix run`") });
});

test("a risky call made by voice asks the owner as in text: the prompt and its buttons reach the companion, and Approve grants it", async () => {
  const { voice, home } = await setup();
  const folder = start.dataFolder();
  voice.script({
    heard: "what does my report say",
    responses: [
      respond.call("request_access", { path: folder, mode: "ro", reason: "to read your report" }),
      respond.call("read_file", { path: join(folder, "report.txt") }),
      respond.say("It says 42 units."),
    ],
  });
  const companion = await connectCompanion(home.home);
  companion.send({ type: "start", turn_detection: "manual", client: "a test companion" });
  await companion.waitFor("ready");
  companion.send({ type: "audio", audio: Buffer.from(tone(200)).toString("base64") });
  companion.send({ type: "commit" });
  await companion.waitFor("notice");
  const prompt = companion.of("notice")[0]!;
  expect(prompt.text).toContain(`the assistant asks for read-only access to \`${folder}\``);
  expect(prompt.text).toContain("Why: to read your report");
  expect(prompt.buttons?.map((b) => b.label)).toEqual(["✅ Approve", "✖️ Deny"]);
  // Nothing is granted until the owner answers: the call is still waiting.
  expect(voice.sessions[0]!.outputs).toEqual([]);
  companion.send({ type: "press", data: prompt.buttons![0]!.data });
  await companion.waitFor("response_done");
  expect(companion.of("notice").map((n) => n.text)).toContain(`Approved: read-only access to ${folder}. The assistant goes on.`);
  expect(voice.sessions[0]!.outputs.map((o) => [o.name, o.output])).toEqual([
    ["request_access", `granted: read-only access to ${folder}. The file tools and run_command can use it now.`],
    ["read_file", expect.stringContaining("Q3 revenue: 42 units")],
  ]);
  expect(voice.violations).toEqual([]);
  companion.close();
});

test("a reload turns realtime voice on (the socket listens) and off (a live session is told, the socket goes)", async () => {
  const { home, daemon, health } = await setup({ realtime: false });
  const socket = join(home.home, "realtime.sock");
  expect((await health()).realtime).toMatchObject({ enabled: false, status: "disabled", socket_alive: null });
  expect(existsSync(socket)).toBe(false);

  const config = readFileSync(join(home.home, "config.toml"), "utf8");
  home.writeConfig(config.replace("[fermix_core.realtime]\nenabled = false", "[fermix_core.realtime]\nenabled = true"));
  expect(readFileSync(join(home.home, "config.toml"), "utf8")).not.toBe(config);
  daemon.proc.kill("SIGHUP");
  await until("realtime voice on after the reload", async () => (await health()).realtime.status === "ready");
  expect(statSync(socket).mode & 0o777).toBe(0o600);
  const companion = await connectCompanion(home.home);
  companion.send({ type: "start" });
  await companion.waitFor("ready");

  home.writeConfig(config);
  daemon.proc.kill("SIGHUP");
  await companion.waitFor("ended");
  expect(companion.of("ended")[0]).toMatchObject({ reason: "disabled" });
  await until("realtime voice off after the reload", async () => (await health()).realtime.status === "disabled");
  expect(existsSync(socket)).toBe(false);
});

test("live: fermix talk reads the microphone through arecord, plays the answer through aplay and shows the transcript; Ctrl-C ends it", async () => {
  const { voice, home } = await setup();
  voice.script({ heard: "good morning", responses: [respond.say("Good morning to you.", { audioMs: 600 })] });
  // Stand-ins for alsa-utils: arecord "hears" a recording and stays open as a microphone does; aplay keeps what it is given.
  const bin = join(home.home, "..", "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "mic.raw"), tone(500));
  const tool = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\necho "$*" > "$(dirname "$0")/${name}.args"\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  tool("arecord", 'cat "$(dirname "$0")/mic.raw"; exec sleep 60');
  tool("aplay", 'exec cat > "$(dirname "$0")/played.$$.raw"');
  const talk = Bun.spawn([ensureBinary(), "talk"], {
    env: { ...home.env, PATH: `${bin}:${process.env.PATH}` } as Record<string, string>,
    stdout: "pipe",
    stderr: "pipe",
  });
  const played = () =>
    readdirSync(bin)
      .filter((f) => f.startsWith("played."))
      .reduce((sum, f) => sum + statSync(join(bin, f)).size, 0);
  await until("the answer played through aplay", () => played() >= 600 * 48);
  talk.kill("SIGINT");
  const [stdout, code] = await Promise.all([new Response(talk.stdout).text(), talk.exited]);
  expect(code).toBe(0);
  expect(stdout).toContain("You: good morning");
  expect(stdout).toContain("Fermix: Good morning to you.");
  expect(readFileSync(join(bin, "arecord.args"), "utf8").trim()).toBe("-q -t raw -f S16_LE -r 24000 -c 1");
  expect(readFileSync(join(bin, "aplay.args"), "utf8").trim()).toBe("-q -t raw -f S16_LE -r 24000 -c 1");
  // What the microphone gave reached the provider as it was.
  expect(Bun.hash(voice.sessions[0]!.audio().subarray(0, 500 * 48))).toBe(Bun.hash(tone(500)));
  expect(voice.sessions[0]!.updates[0]).toMatchObject({ audio: { input: { turn_detection: { type: "server_vad" } } } });
  await until("the upstream session closed", () => voice.sessions[0]!.closed);
});
