/** Ingress and trust (docs/security.md "Who is trusted"): who may talk, who is the operator. */
import { afterEach, describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import { channelReadiness } from "../../src/config/channels.ts";
import { buildHealthReport } from "../../src/daemon/health.ts";
import { authorize, roleFor, trustRules } from "../../src/gateway/trust.ts";
import { reply } from "../fakes/model-server.ts";
import { type Harness, startHarness, TELEGRAM_FRIEND, TELEGRAM_OWNER } from "../helpers/gateway.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const telegram = (lines: string) => `
[fermix_core.providers.openai]
model = "m"
api_key = "sk-x"

[fermix_channels.telegram]
enabled = true
bot_token = "1:t"
${lines}
`;
const role = (lines: string, sender: string, env: Record<string, string> = {}) =>
  roleFor(loadedFrom(telegram(lines), env).config, profileOf("telegram"), sender);

describe("who may talk, and who is the operator", () => {
  test("the owner is the operator; allowed users are users; anyone else is dropped", () => {
    const lines = `owner_user_id = "1"\nallowed_user_ids = ["2", "3"]`;
    expect(role(lines, "1")).toBe("operator");
    expect(role(lines, "2")).toBe("user");
    expect(role(lines, "3")).toBe("user");
    expect(role(lines, "4")).toBeNull();
  });

  test("the owner is inferred only from a single-entry allowlist", () => {
    expect(role(`allowed_user_ids = ["7"]`, "7")).toBe("operator");
    expect(role(`allowed_user_ids = ["7", "8"]`, "7")).toBe("user");
    expect(role(`allowed_user_ids = ["7", "8"]`, "8")).toBe("user");
    // An explicit owner wins over the inference: the single allowed entry is then a user.
    expect(role(`owner_user_id = "1"\nallowed_user_ids = ["7"]`, "7")).toBe("user");
  });

  test("command_allowlist ids are operators and may talk", () => {
    const lines = `allowed_user_ids = ["7", "8"]\ncommand_allowlist = ["8", "9"]`;
    expect(role(lines, "8")).toBe("operator");
    expect(role(lines, "9")).toBe("operator");
    expect(role(lines, "7")).toBe("user");
  });

  test("allowlists come from the environment too (comma-separated)", () => {
    expect(role(`owner_user_id = "1"`, "5", { TELEGRAM_ALLOWED_USER_IDS: "5,6" })).toBe("user");
    expect(role("", "5", { TELEGRAM_ALLOWED_USER_IDS: "5" })).toBe("operator");
    expect(role(`owner_user_id = "1"`, "9", { TELEGRAM_ALLOWED_USER_IDS: "5,6" })).toBeNull();
  });

  test("a sender's aliases (Signal's phone number beside its UUID) match an owner or allowlist written either way", () => {
    const uuid = "9d7c2f6e-0000-4000-8000-00000000a11c";
    const signal = (lines: string) => `
[fermix_channels.signal]
enabled = true
account = "+15550001111"
${lines}
`;
    const roleOf = (lines: string, sender: string, aliases: string[] = []) => roleFor(loadedFrom(signal(lines)).config, profileOf("signal"), sender, aliases);
    expect(roleOf(`owner_user_id = "+15550002222"`, uuid, ["+15550002222"])).toBe("operator");
    expect(roleOf(`owner_user_id = "${uuid}"`, uuid, ["+15550002222"])).toBe("operator");
    expect(roleOf(`owner_user_id = "+1"\nallowed_sender_ids = ["+15550003333"]`, uuid, ["+15550003333"])).toBe("user");
    // Without the alias, the number alone does not let the UUID in; a stranger's number matches nothing.
    expect(roleOf(`owner_user_id = "+15550002222"`, uuid)).toBeNull();
    expect(roleOf(`owner_user_id = "+15550002222"`, uuid, ["+15550009999"])).toBeNull();
  });

  test("the command line and ACP are the local operator", () => {
    const config = loadedFrom(telegram(`owner_user_id = "1"`)).config;
    expect(roleFor(config, profileOf("cli"), "anyone")).toBe("operator");
    expect(roleFor(config, profileOf("acp"), "anyone")).toBe("operator");
  });

  test("a channel with neither owner nor allowlist is refused at start, and health says why", () => {
    const loaded = loadedFrom(telegram(""));
    expect(channelReadiness(loaded.config, "telegram", profileOf("telegram"))).toEqual({ kind: "refused", reason: expect.stringContaining("owner_user_id") });
    // Its sender is denied even if it were reached.
    expect(authorize(trustRules(loaded.config, profileOf("telegram")), "anyone")).toBeNull();
    const report = buildHealthReport({
      version: "t",
      now: new Date(),
      loaded,
      channels: new Map(),
      databaseReady: true,
      restartRequired: false,
    });
    expect(report.channels.find((c) => c.name === "telegram")).toEqual(expect.objectContaining({ status: "failed", enabled: true }));
    expect(report.failures.join("\n")).toContain("telegram: refused");
    expect(report.status).toBe("degraded");
  });
});

describe("operator commands through the gateway", () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  test("a non-owner sending an operator command is told it needs the owner, and telemetry records it", async () => {
    h = await startHarness();
    h.fake.reply(reply.text("remember: blue"));
    await h.ingest({ senderId: TELEGRAM_FRIEND, text: "my colour is blue" });
    expect(await h.ingest({ senderId: TELEGRAM_FRIEND, text: "/new" })).toBe("unauthorized_command");
    expect(h.telegram.texts().at(-1)).toContain("owner");
    expect(h.eventsNamed("command.unauthorized")).toEqual([
      expect.objectContaining({ metadata: { channel: "telegram", command: "new", sender_id: TELEGRAM_FRIEND } }),
    ]);
    // The command did not run: the conversation window is intact.
    expect(h.core.conversations.history("telegram:c1:").map((m) => m.text)).toEqual(["my colour is blue", "remember: blue"]);
    expect(h.fake.requests).toHaveLength(1);

    // The owner may.
    expect(await h.ingest({ senderId: TELEGRAM_OWNER, text: "/new" })).toBe("command");
    expect(h.core.conversations.history("telegram:c1:")).toEqual([]);
  });

  test("any authorized sender may use /help and /whoami", async () => {
    h = await startHarness();
    expect(await h.ingest({ senderId: TELEGRAM_FRIEND, text: "/whoami" })).toBe("command");
    expect(h.telegram.texts().at(-1)).toContain(TELEGRAM_FRIEND);
    expect(await h.ingest({ senderId: TELEGRAM_FRIEND, text: "/help" })).toBe("command");
    expect(h.telegram.texts().at(-1)).toContain("/whoami");
    expect(h.eventsNamed("command.unauthorized")).toEqual([]);
  });

  test("with two allowed users and no owner, nobody may run operator commands", async () => {
    h = await startHarness({
      toml: `[fermix_channels.telegram]\nenabled = true\nbot_token = "1:t"\nallowed_user_ids = ["a", "b"]\n[fermix_channels.acp]\nenabled = false\n`,
    });
    for (const sender of ["a", "b"]) {
      expect(await h.ingest({ senderId: sender, text: "/stop" })).toBe("unauthorized_command");
      expect(h.telegram.texts().at(-1)).toContain("owner");
    }
  });

  test("a single allowed user is the owner and may run operator commands", async () => {
    h = await startHarness({
      toml: `[fermix_channels.telegram]\nenabled = true\nbot_token = "1:t"\nallowed_user_ids = ["solo"]\n[fermix_channels.acp]\nenabled = false\n`,
    });
    expect(await h.ingest({ senderId: "solo", text: "/stop" })).toBe("command");
    expect(h.telegram.texts().at(-1)).toContain("Nothing was running");
  });
});
