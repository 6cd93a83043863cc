/** Fuzzing what the Discord gateway hands the adapter: frames off the socket and MESSAGE_CREATE payloads never throw and always classify. */
import { expect, test } from "bun:test";
import { ChannelDirectory } from "../../../src/channels/discord/directory.ts";
import { type DiscordParseResult, parseMessageCreate } from "../../../src/channels/discord/inbound.ts";
import { parseFrame } from "../../../src/channels/discord/protocol.ts";
import { DISCORD_BOT, DISCORD_CHANNEL, DISCORD_GUILD, DISCORD_THREAD, guildCreate, messageCreate } from "../../fakes/discord.ts";
import { inboundProblems, mutateBytes, mutateJson, randomJson, rng } from "../../helpers/fuzz.ts";

const SEED = 0xd15c0;
const RUNS = 10_000;
const attachment = {
  id: "1600000000000000001",
  filename: "a.png",
  size: 10,
  url: "https://cdn.discordapp.com/a.png",
  proxy_url: "https://x",
  content_type: "image/png",
};

const SEEDS: unknown[] = [
  messageCreate("1500000000000000001", "hello"),
  messageCreate("1500000000000000002", `<@${DISCORD_BOT.id}> hi`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] }),
  messageCreate("1500000000000000003", "again", { guildId: DISCORD_GUILD, replyTo: { id: "1500000000000000001", author: DISCORD_BOT } }),
  messageCreate("1500000000000000004", "", { attachments: [attachment] }),
  messageCreate("1500000000000000005", `<@${DISCORD_BOT.id}> t`, { guildId: DISCORD_GUILD, channelId: DISCORD_THREAD, mentions: [DISCORD_BOT] }),
];

function problem(result: DiscordParseResult): string | undefined {
  switch (result.kind) {
    case "invalid":
      return undefined;
    case "ignored":
      return typeof result.why === "string" && result.why !== "" ? undefined : "ignored without a reason";
    case "message": {
      const problems = inboundProblems(result.message);
      if (result.message.channel !== "discord") problems.push("channel is not discord");
      if (result.key !== result.message.messageId) problems.push("key is not the message id");
      if (result.message.senderId === DISCORD_BOT.id) problems.push("the bot's own message got through");
      return problems.length > 0 ? problems.join("; ") : undefined;
    }
    default:
      return `unknown kind ${(result as { kind: unknown }).kind}`;
  }
}

test(`${RUNS} random and mutated MESSAGE_CREATE payloads never throw and always classify`, () => {
  const r = rng(SEED);
  const directory = new ChannelDirectory();
  directory.guildCreate(guildCreate());
  const kinds: Record<string, number> = {};
  for (let i = 0; i < RUNS; i++) {
    const input = i % 3 === 0 ? randomJson(r) : mutateJson(r, r.pick(SEEDS));
    let result: DiscordParseResult;
    try {
      result = parseMessageCreate(input, { botUserId: DISCORD_BOT.id, threadParent: (c) => directory.threadParent(c), receivedAt: 1 });
      // The directory takes the same junk without throwing.
      directory.thread(input);
      directory.threadListSync(input);
      directory.threadDelete(input);
    } catch (error) {
      throw new Error(`seed ${SEED}, run ${i}: threw ${error}`);
    }
    const wrong = problem(result);
    if (wrong) throw new Error(`seed ${SEED}, run ${i}: ${wrong}: ${JSON.stringify(result)}`);
    kinds[result.kind] = (kinds[result.kind] ?? 0) + 1;
  }
  expect(Object.keys(kinds).sort()).toEqual(["ignored", "invalid", "message"]);
  expect(directory.threadParent(DISCORD_CHANNEL)).toBeUndefined();
});

test(`${RUNS} random and corrupted gateway frames parse or are skipped, never throw`, () => {
  const r = rng(SEED + 1);
  const frames = [
    { op: 10, d: { heartbeat_interval: 41250 }, s: null, t: null },
    { op: 0, d: SEEDS[0], s: 7, t: "MESSAGE_CREATE" },
    { op: 9, d: false, s: null, t: null },
    { op: 11, d: null, s: null, t: null },
  ];
  let parsed = 0;
  for (let i = 0; i < RUNS; i++) {
    const input = i % 2 === 0 ? new TextDecoder().decode(mutateBytes(r, r.pick(frames))) : JSON.stringify(randomJson(r));
    let frame: ReturnType<typeof parseFrame>;
    try {
      frame = parseFrame(input);
    } catch (error) {
      throw new Error(`seed ${SEED + 1}, run ${i}: threw ${error}`);
    }
    if (frame === null) continue;
    parsed++;
    expect(Number.isInteger(frame.op)).toBe(true);
    expect(frame.s === null || (Number.isSafeInteger(frame.s) && frame.s >= 0)).toBe(true);
    expect(frame.t === null || typeof frame.t === "string").toBe(true);
  }
  expect(parsed).toBeGreaterThan(100);
});
