/**
 * The agent's access request on Discord, end to end with the compiled
 * binary: the prompt carries Approve and Deny as message components; a press
 * is an interaction the daemon acknowledges; another user's press is refused
 * to them alone; the owner's press grants the access, takes the buttons off,
 * and the waiting turn goes on; in a guild channel the prompt carries no
 * code, in the owner's DM it does.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { InteractionResponseType, MessageFlags } from "discord-api-types/v10";
import { DISCORD_ALICE, DISCORD_BOB, DISCORD_BOT, DISCORD_CHANNEL, DISCORD_DM, DISCORD_GUILD, type DiscordFake, mention } from "../fakes/discord.ts";
import { lastToolOutput, reply } from "../fakes/model-server.ts";
import { CHANNELS_OFF, discordToml, providerToml, tomlTable } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

/** The daemon on the Discord fake: Alice the owner, Bob an allowed user. */
async function discordDaemon() {
  const model = await start.model();
  const discord = start.discord();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, allowedUserIds: [DISCORD_BOB.id], apiBase: discord.apiBase }) +
      tomlTable("fermix_core.sandbox", { access_request_timeout_seconds: 60 }),
  );
  const daemon = await start.daemon(home);
  await discord.gateway.waitForLive(10_000);
  return { model, discord, daemon };
}

/** The bot's access prompt in a channel, once it is there. */
async function accessPrompt(discord: DiscordFake, channelId: string) {
  await discord.waitForTexts(channelId, (texts) => texts.some((t) => t.includes("Access request")), 15_000);
  return discord.visible(channelId).find((m) => m.content.includes("Access request"))!;
}

test("in a guild channel: Approve and Deny, no code; Bob's press is refused to him alone, Alice's grants, the buttons go and the turn goes on", async () => {
  const { model, discord, daemon } = await discordDaemon();
  const data = start.dataFolder();
  model.reply(
    reply.toolCall("request_access", { path: data, mode: "ro", reason: "to read the Q3 report" }),
    reply.toolCall("read_file", { path: join(data, "report.txt") }),
    reply.text("Q3 revenue was 42 units."),
  );
  // In a shared channel the owner's turns ask for nothing until the owner switches that on there.
  discord.userMessage(`${mention()} /sandbox chat on`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] });
  await discord.waitForTexts(DISCORD_CHANNEL, (texts) => texts.some((t) => t.includes("/confirm")), 15_000);
  const code = /\/confirm ([A-Z0-9]{8})/.exec(discord.visible(DISCORD_CHANNEL).find((m) => m.content.includes("/confirm"))!.content)![1];
  discord.userMessage(`${mention()} /confirm ${code}`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] });
  await discord.waitForTexts(DISCORD_CHANNEL, (texts) => texts.some((t) => t.startsWith("On: in this chat")), 15_000);
  discord.userMessage(`${mention()} how did Q3 go?`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] });

  const prompt = await accessPrompt(discord, DISCORD_CHANNEL);
  expect(prompt.content).toContain(data);
  expect(prompt.content).toContain("to read the Q3 report");
  expect(prompt.content).not.toContain("/confirm");
  expect(prompt.content).not.toMatch(/\b[A-HJKMNP-Z2-9]{8}\b/);
  const buttons = discord.buttons(prompt.id);
  expect(buttons.map((b) => b.label)).toEqual(["✅ Approve", "✖️ Deny"]);
  const approve = buttons[0]!.customId!;

  const byBob = await discord.waitForInteractionAnswer(discord.pressButton(prompt.id, { user: DISCORD_BOB, customId: approve }));
  expect(byBob.type).toBe(InteractionResponseType.ChannelMessageWithSource);
  expect(byBob.data).toMatchObject({ flags: MessageFlags.Ephemeral });
  expect(String(byBob.data?.content)).toContain("not yours");
  expect(discord.buttons(prompt.id)).toHaveLength(2);
  expect(model.requests).toHaveLength(1);

  const byAlice = await discord.waitForInteractionAnswer(discord.pressButton(prompt.id, { user: DISCORD_ALICE, customId: approve }));
  expect(byAlice.type).toBe(InteractionResponseType.UpdateMessage);
  await discord.waitForTexts(DISCORD_CHANNEL, (texts) => texts.some((t) => t.includes("42 units")), 15_000);
  expect(lastToolOutput(model.requests[1]!)).toStartWith("granted: read-only access");
  expect(lastToolOutput(model.requests[2]!)).toBe("Q3 revenue: 42 units\n");
  // The buttons have served: taken off, and the prompt says what was decided.
  expect(discord.buttons(prompt.id)).toEqual([]);
  expect(discord.message(prompt.id)!.content).toContain("Approved");
  expect(daemon.logs()).toContain("tool=request_access");
  expect(daemon.logs()).not.toContain(discord.token);
  for (const { token } of discord.rest.interactions.all) expect(daemon.logs()).not.toContain(token);
}, 60_000);

test("in the owner's DM: the prompt shows the code as well, and Deny answers the waiting turn", async () => {
  const { model, discord } = await discordDaemon();
  const data = start.dataFolder();
  model.reply(reply.toolCall("request_access", { path: data, mode: "ro", reason: "to read the Q3 report" }), reply.text("Understood, I won't read it."));
  discord.userMessage("read my Q3 report");

  const prompt = await accessPrompt(discord, DISCORD_DM);
  const token = /\/confirm ([A-Z0-9]{8})/.exec(prompt.content)?.[1];
  expect(token).toBeDefined();
  const deny = discord.buttons(prompt.id).find((b) => b.label?.includes("Deny"))!.customId!;
  await discord.waitForInteractionAnswer(discord.pressButton(prompt.id, { customId: deny }));
  await discord.waitForTexts(DISCORD_DM, (texts) => texts.some((t) => t.includes("I won't read it")), 15_000);
  expect(lastToolOutput(model.requests[1]!)).toStartWith("denied");
  expect(discord.buttons(prompt.id)).toEqual([]);
  expect(discord.message(prompt.id)!.content).toContain("Denied");
}, 60_000);
