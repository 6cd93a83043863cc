/**
 * Each channel's reading of OpenClaw (src/channels/<name>/openclaw.ts): its
 * allowlist entries as sender ids, its cron targets as chats, and where its
 * credentials come from.
 */
import { describe, expect, test } from "bun:test";
import type { OpenClawSource } from "../../src/channels/openclaw.ts";
import { profileOf } from "../../src/channels/registry.ts";
import type { ChannelName } from "../../src/config/schema.ts";

const oc = (name: ChannelName) => profileOf(name).setup!.openclaw!;
const source = (vars: Record<string, string> = {}, files: Record<string, string> = {}): OpenClawSource => ({
  secret: (v) => (typeof v === "string" ? v : undefined),
  readFile: (path) => files[path],
  env: (name) => vars[name],
});

describe("Telegram", () => {
  test("ids bare or prefixed; usernames are not ids", () => {
    expect(["tg:111", "telegram:222", "333", "@alice", "*"].map(oc("telegram").senderId)).toEqual(["111", "222", "333", undefined, undefined]);
  });
  test("chats with topics, in every form OpenClaw documents", () => {
    const chat = oc("telegram").chat;
    expect(chat("-1001234567890")).toEqual({ chatId: "-1001234567890" });
    expect(chat("-1001234567890:topic:123")).toEqual({ chatId: "-1001234567890", threadId: "123" });
    expect(chat("-1001234567890:123")).toEqual({ chatId: "-1001234567890", threadId: "123" });
    expect(chat("telegram:group:-1001234567890:topic:123")).toEqual({ chatId: "-1001234567890", threadId: "123" });
    expect(typeof chat("@channelname")).toBe("string");
  });
  test("the token from botToken, else the token file, else TELEGRAM_BOT_TOKEN; none, or something that is not a token, leaves the channel off", () => {
    const t = oc("telegram").translate;
    const [a, b, c] = ["1:AAaaaaaaaaaaaaaaaaaaaaaaaaa", "2:AAbbbbbbbbbbbbbbbbbbbbbbbbb", "3:AAccccccccccccccccccccccccc"];
    expect(t({ botToken: a }, source()).values).toEqual({ bot_token: a });
    expect(t({ tokenFile: "/t" }, source({}, { "/t": `${b}\n` })).values).toEqual({ bot_token: b });
    expect(t({}, source({ TELEGRAM_BOT_TOKEN: c })).values).toEqual({ bot_token: c });
    expect(t({}, source()).off).toContain("no bot token");
    const notToken = t({ tokenFile: "/t" }, source({}, { "/t": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blb\n" }));
    expect(notToken.values).toEqual({});
    expect(notToken.off).toContain("not one");
  });
});

describe("the others", () => {
  test("Discord: user ids and mentions; channel targets only", () => {
    expect(["user:12", "<@34>", "<@!56>", "78", "alice#1"].map(oc("discord").senderId)).toEqual(["12", "34", "56", "78", undefined]);
    expect(oc("discord").chat("channel:99")).toEqual({ chatId: "99" });
    expect(typeof oc("discord").chat("user:12")).toBe("string");
  });
  test("Slack: member ids; conversation targets; without a signing secret it stays off and says what to give", () => {
    expect(["U0A", "user:W0B", "alice"].map(oc("slack").senderId)).toEqual(["U0A", "W0B", undefined]);
    expect(oc("slack").chat("channel:C0A")).toEqual({ chatId: "C0A" });
    const socket = oc("slack").translate({ botToken: "xoxb-1", appToken: "xapp-1" }, source());
    expect(socket.off).toContain("signing secret");
    expect(socket.values).toEqual({ bot_token: "xoxb-1" });
  });
  test("Signal: numbers and uuid: ids; groups as Fermix names them", () => {
    expect(["+15550002222", "uuid:a11ce000-0000-4000-8000-00000000a11c", "alice"].map(oc("signal").senderId)).toEqual([
      "+15550002222",
      "a11ce000-0000-4000-8000-00000000a11c",
      undefined,
    ]);
    expect(oc("signal").chat("signal:group:abc=")).toEqual({ chatId: "group:abc=" });
  });
  test("WhatsApp: numbers as the Cloud API writes them; always off, with the Cloud API steps by hand", () => {
    expect(["+1 (555) 555-0123", "whatsapp:+447700900123", "bob"].map(oc("whatsapp").senderId)).toEqual(["15555550123", "447700900123", undefined]);
    const imported = oc("whatsapp").translate({}, source());
    expect(imported.off).toContain("linked device");
    expect(imported.manual.join("\n")).toContain("/webhook/whatsapp");
  });
});
