/**
 * Discord end to end with the compiled binary: the daemon finds the gateway
 * through the fake's REST API, identifies over a real WebSocket, and answers
 * the owner over REST; a stranger gets nothing and costs no model call;
 * `/stop` ends a slow streamed answer and nothing of it follows the "Stopped"
 * reply; a fatal close code shows in health with what to do about it.
 */
import { expect, test } from "bun:test";
import { GatewayOpcodes, MessageFlags } from "discord-api-types/v10";
import {
  DISCORD_ALICE,
  DISCORD_BOB,
  DISCORD_BOB_DM,
  DISCORD_BOT,
  DISCORD_CHANNEL,
  DISCORD_DM,
  DISCORD_GUILD,
  type DiscordFake,
  mention,
} from "../fakes/discord.ts";
import { reply } from "../fakes/model-server.ts";
import { waitFor } from "../fakes/recorder.ts";
import { type RunningDaemon, runFermix } from "../helpers/binary.ts";
import { CHANNELS_OFF, type DiscordOptions, discordToml, providerToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { until, within } from "../helpers/wait.ts";

const start = e2eResources();

interface Health {
  status: string;
  failures: string[];
  channels: Array<{ name: string; status: string; enabled: boolean; mode: string | null; process_alive: boolean | null }>;
}

async function health(d: RunningDaemon): Promise<{ code: number; body: Health }> {
  const res = await fetch(new URL("/health/ready", d.url));
  return { code: res.status, body: (await res.json()) as Health };
}

/**
 * After /stop: the draft is edited at most once a second (EDIT_EVERY_MS) and
 * the model sent a chunk every 250 ms, so a stray edit or part of the stopped
 * answer would show within two edit intervals; 2.5 s holds that on a loaded machine.
 */
const STRAY_EDIT_MS = 2500;
/** After a fatal close: the first reconnect waits at most its backoff's base (1 s), so one that should not happen would be connected within this. */
const NO_RECONNECT_MS = 1500;

async function discordHealth(d: RunningDaemon, status: string): Promise<Health> {
  let body: Health | undefined;
  await until(
    `discord to be ${status}`,
    async () => {
      body = (await health(d)).body;
      return body.channels.find((c) => c.name === "discord")?.status === status;
    },
    10_000,
  ).catch(() => {
    throw new Error(`discord never became ${status}: ${JSON.stringify(body)}`);
  });
  return body!;
}

/** The fake model, the Discord fake, and a home whose Discord channel is owned by Alice. */
async function setup(options: Partial<DiscordOptions> = {}) {
  const model = await start.model();
  const discord = start.discord();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, apiBase: discord.apiBase, ...options }),
  );
  return { model, discord, home };
}

const flagsOf = (discord: DiscordFake, channel: string) => discord.botMessages(channel).map((m) => m.flags);

test("the owner's DM and @mention are answered; a stranger gets nothing and costs no model call", async () => {
  const { model, discord, home } = await setup();
  model.reply(reply.text("Hello ", "from the ", "fake model."), reply.text("Sunny ", "all day."));
  const d = await start.daemon(home);

  const ready = await discordHealth(d, "ready");
  expect(ready.channels.find((c) => c.name === "discord")).toEqual({ name: "discord", status: "ready", enabled: true, mode: "gateway", process_alive: true });
  const identify = discord.gateway.framesSent(GatewayOpcodes.Identify)[0]!;
  expect((identify.d as { intents: number }).intents).toBe(37377);

  discord.userMessage("hi fermix, say hello");
  const texts = await discord.waitForTexts(DISCORD_DM, (t) => t.join("\n").includes("fake model."), 15_000);
  expect(texts.join("\n")).toContain("Hello from the fake model.");
  expect(flagsOf(discord, DISCORD_DM).every((f) => (f & MessageFlags.SuppressEmbeds) !== 0)).toBe(true);
  const create = discord.calls("messages.create")[0]!;
  expect(create.body.allowed_mentions).toEqual({ parse: ["users"], replied_user: false });

  // In the guild: a message without a mention is not for the bot; a mention is, and the answer quotes it.
  discord.userMessage("just chatting", { guildId: DISCORD_GUILD });
  const asked = discord.userMessage(`${mention()} weather?`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] });
  await discord.waitForTexts(DISCORD_CHANNEL, (t) => t.join("\n").includes("all day."), 15_000);
  const first = discord.botMessages(DISCORD_CHANNEL)[0]!;
  expect(first.messageReference).toMatchObject({ message_id: asked, channel_id: DISCORD_CHANNEL });
  expect(first.allowedMentions).toEqual({ parse: ["users"], replied_user: true });
  expect(model.requests).toHaveLength(2);
  expect(JSON.stringify(model.requests[1]!.body)).toContain("weather?");
  expect(JSON.stringify(model.requests[1]!.body)).not.toContain(DISCORD_BOT.id);

  // Bob is on no allowlist: received, dropped, no reply, no model call.
  discord.userMessage("hello? anyone?", { author: DISCORD_BOB, channelId: DISCORD_BOB_DM });
  // Dropped is the end of it: no reply and no model call can follow the drop.
  await waitFor(() => d.logs().includes("unauthorized sender dropped"), { timeoutMs: 5000, what: "the drop" });
  expect(discord.botMessages(DISCORD_BOB_DM)).toEqual([]);
  expect(model.requests).toHaveLength(2);

  // doctor, offline, reports the bot id the daemon learnt from READY.
  const doctor = await runFermix(["doctor", "--json"], home.env);
  expect(doctor.stdout).toContain(`learnt from Discord at start: ${DISCORD_BOT.id}`);

  expect(d.logs()).not.toContain(discord.token);
  expect(await d.stop()).toBe(0);
}, 60_000);

test("a 2,500-character answer arrives as two messages; only the first notifies", async () => {
  const { model, discord, home } = await setup({ streaming: "off" });
  const paragraph = (n: number) => `Paragraph ${n}: ${"lorem ipsum dolor sit amet ".repeat(45).trim()}.`;
  model.reply(reply.text(paragraph(1), "\n\n", paragraph(2)));
  await start.daemon(home);
  await discord.gateway.waitForLive(10_000);
  discord.userMessage("write two long paragraphs");
  const texts = await discord.waitForTexts(DISCORD_DM, (t) => t.join("\n").includes("Paragraph 2"), 15_000);
  expect(texts).toHaveLength(2);
  expect(texts.every((t) => t.length <= 2000)).toBe(true);
  expect(flagsOf(discord, DISCORD_DM)).toEqual([MessageFlags.SuppressEmbeds, MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications]);
}, 60_000);

test('/stop during a slow streamed answer aborts the model call, and nothing of that answer is sent after "Stopped"', async () => {
  const { model, discord, home } = await setup();
  const chunks = Array.from({ length: 80 }, (_, i) => `chunk${i} of the endless answer. `);
  model.reply(reply.slow(250, ...chunks));
  const d = await start.daemon(home);
  await discord.gateway.waitForLive(10_000);

  discord.userMessage("tell me everything");
  // The draft is on screen: the answer is streaming.
  await discord.waitForTexts(DISCORD_DM, (t) => t.some((x) => x.includes("chunk2")), 15_000);
  discord.userMessage("/stop");
  const stoppedAt = await waitFor(
    () => discord.requests.findIndex((r) => r.api === "messages.create" && String(r.body.content ?? "").includes("Stopped")) + 1,
    { timeoutMs: 10_000, what: "the Stopped reply" },
  );
  const [request] = model.requests;
  await within(request!.untilAborted, "the model call to be aborted", 5000);
  expect(request!.aborted).toBe(true);

  // Give a stray edit or part every chance to show up, then check none did.
  await Bun.sleep(STRAY_EDIT_MS);
  const after = discord.requests.slice(stoppedAt);
  const ofTheAnswer = after.filter((r) => (r.api === "messages.create" || r.api === "messages.edit") && String(r.body.content ?? "").includes("chunk"));
  expect(ofTheAnswer).toEqual([]);
  expect(discord.visibleTexts(DISCORD_DM).at(-1)).toContain("Stopped");
  expect(model.requests).toHaveLength(1);
  expect(d.logs()).not.toContain(discord.token);
}, 60_000);

test("Discord refusing the Message Content intent (4014) shows in health as failed, with what to do, and nothing reconnects", async () => {
  const { discord, home } = await setup();
  discord.gateway.messageContentAllowed = false;
  const d = await start.daemon(home);
  const report = await discordHealth(d, "failed");
  const { code } = await health(d);
  expect(code).toBe(503);
  expect(report.channels.find((c) => c.name === "discord")).toEqual({
    name: "discord",
    status: "failed",
    enabled: true,
    mode: "gateway",
    process_alive: false,
  });
  expect(report.failures.join("\n")).toContain("enable the Message Content intent for this bot in the Developer Portal");
  await Bun.sleep(NO_RECONNECT_MS);
  expect(discord.gateway.connections).toHaveLength(1);
  expect(JSON.stringify(report)).not.toContain(discord.token);
}, 60_000);
