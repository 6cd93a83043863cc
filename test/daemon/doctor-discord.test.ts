/** `fermix doctor`'s Discord rows: token shape, bot_user_id configured or learnt, the streaming mode in effect. */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiscordStateStore } from "../../src/channels/discord/session.ts";
import { discordDoctorRows } from "../../src/daemon/doctor-discord.ts";
import { openDatabase } from "../../src/store/db.ts";
import { DISCORD_BOT, fakeBotToken } from "../fakes/discord.ts";
import { tomlTable } from "../helpers/config.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const config = (keys: Record<string, string | boolean>) =>
  loadedFrom(tomlTable("fermix_channels.discord", { enabled: true, owner_user_id: "1", ...keys })).config;
const row = (rows: ReturnType<typeof discordDoctorRows>, check: string) => rows.find((r) => r.check === `channel discord ${check}`);

function database(learnt?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "fermix-doctor-discord-"));
  dirs.push(dir);
  const path = join(dir, "fermix.db");
  const db = openDatabase(path);
  if (learnt) new DiscordStateStore(db, fakeBotToken()).saveBotUserId(learnt);
  db.close();
  return path;
}

test("a disabled Discord has no rows", () => {
  expect(discordDoctorRows(loadedFrom("").config, "/nonexistent.db")).toEqual([]);
});

test("token present and well-formed; bot_user_id neither set nor learnt yet is a warning, not a failure; streaming defaults to draft", () => {
  const rows = discordDoctorRows(config({ bot_token: fakeBotToken() }), "/nonexistent/fermix.db");
  expect(row(rows, "token")).toEqual({ check: "channel discord token", status: "ok", detail: `bot_token set (for bot ${DISCORD_BOT.id})` });
  expect(row(rows, "bot_user_id")).toMatchObject({ status: "warn", detail: expect.stringContaining("learns it from Discord") });
  expect(row(rows, "streaming")).toMatchObject({ status: "ok", detail: expect.stringContaining("draft") });
  expect(rows.some((r) => r.status === "fail")).toBe(false);
});

test("bot_user_id learnt at an earlier start is reported from the database", () => {
  const rows = discordDoctorRows(config({ bot_token: fakeBotToken() }), database(DISCORD_BOT.id));
  expect(row(rows, "bot_user_id")).toEqual({
    check: "channel discord bot_user_id",
    status: "ok",
    detail: `not set; learnt from Discord at start: ${DISCORD_BOT.id}`,
  });
});

test("a configured bot_user_id is shown, and flagged when the token belongs to another bot", () => {
  expect(row(discordDoctorRows(config({ bot_token: fakeBotToken(), bot_user_id: DISCORD_BOT.id }), database()), "bot_user_id")).toMatchObject({ status: "ok" });
  const wrong = row(discordDoctorRows(config({ bot_token: fakeBotToken(), bot_user_id: "1999999999999999999" }), database()), "bot_user_id");
  expect(wrong).toMatchObject({ status: "warn", detail: expect.stringContaining(DISCORD_BOT.id) });
});

test("a token that is not shaped like a Discord token is a warning; an explicit streaming mode is shown as set", () => {
  const rows = discordDoctorRows(config({ bot_token: "definitely-not-a-token", streaming: "block" }), "/nonexistent.db");
  expect(row(rows, "token")).toMatchObject({ status: "warn" });
  expect(row(rows, "streaming")).toMatchObject({ status: "ok", detail: 'streaming = "block"' });
  expect(JSON.stringify(rows)).not.toContain("definitely-not-a-token");
});
