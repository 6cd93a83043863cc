/**
 * Every channel's profile is complete and agrees with its adapter and with
 * the config schema: what the rest of Fermix reads from the profile (and
 * never asks the channel by name) is what the channel does. The adapter
 * suite (adapter.contract.ts) checks the same capabilities against each
 * platform's fake; this file covers every channel, the editor socket and
 * the command line included, without starting any.
 */
import { describe, expect, test } from "bun:test";
import { cliPort } from "../../src/channels/cli/port.ts";
import { CHANNELS, profileOf } from "../../src/channels/registry.ts";
import { CHANNEL_NAMES, type ChannelName, GATEWAY_CHANNELS, schemaAt } from "../../src/config/schema.ts";
import { loadedFrom } from "../helpers/loaded.ts";

/** A config that serves every channel with placeholder credentials (nothing is started). */
const served = loadedFrom(
  CHANNEL_NAMES.map(
    (name) =>
      `[fermix_channels.${name}]\nenabled = true\n${profileOf(name)
        .requiredKeys.map((key) => `${key} = "1000"`)
        .join("\n")}\n`,
  ).join("\n"),
).config;

const inSchema = (name: ChannelName, key: string) => schemaAt(["fermix_channels", name, key]) !== undefined;

describe.each([...GATEWAY_CHANNELS])("the %s profile", (name) => {
  const profile = profileOf(name);

  test("is registered under its own name, with names for a sentence and a heading and a text it can render", () => {
    expect(profile.name).toBe(name);
    expect(profile.displayName.trim()).not.toBe("");
    expect(profile.title.trim()).not.toBe("");
    expect(profile.text.limit).toBeGreaterThan(0);
    expect(profile.text.dialect.name.trim()).not.toBe("");
    expect(profile.text.measure("hello")).toBeGreaterThan(0);
    expect(profile.inboundMediaCap).toBeGreaterThanOrEqual(0);
    expect(profile.acceptanceWindowMs(served)).toBeGreaterThanOrEqual(0);
  });

  test("streams by what it can do: drafts where it edits, blocks elsewhere, nothing where the client shows the turn itself", () => {
    if (profile.streaming === null) {
      // Only a local surface shows the turn itself (an editor) or prints every message (the terminal); nothing waits for it later.
      expect(profile.local).toBe(true);
      expect(profile.sessionOnly).toBe(true);
    } else expect(profile.streaming).toBe(profile.capabilities.edit ? "draft" : "block");
  });

  test("is authorized either by the OS (a local surface, the owner) or by an owner and an allowlist in its table", () => {
    if (profile.local) {
      expect(profile.allowlistKey).toBeUndefined();
      expect(profile.ownerKey).toBeUndefined();
      expect(profile.isDirect({ chatId: "anything", senderId: "someone" })).toBe(true);
      return;
    }
    const table = name as ChannelName;
    expect(profile.allowlistKey && inSchema(table, profile.allowlistKey)).toBe(true);
    expect(profile.ownerKey && inSchema(table, profile.ownerKey)).toBe(true);
  });
});

test("a chat with no message in hand (a scheduled job's) is direct by each platform's own rule", () => {
  const direct = (channel: (typeof GATEWAY_CHANNELS)[number], chatId: string, senderId = "u1") => profileOf(channel).isDirect({ chatId, senderId });
  // Telegram: a private chat's id is its user's; a group's is negative.
  expect([direct("telegram", "u1"), direct("telegram", "-100123")]).toEqual([true, false]);
  // Slack: DM channel ids start with D.
  expect([direct("slack", "D0442US94JD"), direct("slack", "C0CHANNEL1")]).toEqual([true, false]);
  // Signal: a group chat is "group:<id>", a direct one the sender's id.
  expect([direct("signal", "u1"), direct("signal", "group:abc=")]).toEqual([true, false]);
  // WhatsApp's Cloud API has one-to-one chats only; a Discord channel id says nothing without its message.
  expect([direct("whatsapp", "15550001111"), direct("discord", "u1")]).toEqual([true, false]);
});

describe.each([...CHANNEL_NAMES])("the configured channel %s", (name) => {
  const profile = profileOf(name);

  test("names only keys its table has: required, credential, setup fields", () => {
    for (const key of profile.requiredKeys) expect(inSchema(name, key)).toBe(true);
    if (profile.credentialKey) expect(profile.requiredKeys).toContain(profile.credentialKey);
    for (const field of profile.setup?.fields ?? []) expect(inSchema(name, field.key)).toBe(true);
    expect(profile.setup?.fields[0]?.key).toBe("enabled");
    if (profile.setup?.pairing) {
      expect(inSchema(name, profile.setup.pairing.tokenKey)).toBe(true);
      expect(inSchema(name, profile.setup.pairing.apiRootKey)).toBe(true);
    }
  });

  test("has a mode, and a webhook exactly when it receives by webhook, at /webhook/<name>", () => {
    expect(profile.mode).not.toBeNull();
    expect(profile.webhook !== undefined).toBe(profile.mode === "webhook");
    if (profile.webhook) expect(profile.webhook.path).toBe(`/webhook/${name}`);
  });

  test("its adapter, built from the registry's loader, is what the profile says: name, capabilities, media cap", async () => {
    const load = CHANNELS[name].adapter;
    expect(load).toBeDefined();
    const adapter = (await load!())(served);
    try {
      expect(adapter.name).toBe(name);
      expect(adapter.capabilities).toEqual(profile.capabilities);
      expect(adapter.inboundMediaCap).toBe(profile.inboundMediaCap);
    } finally {
      await adapter.stop();
    }
  });
});

test("the command line has a profile and no adapter; its port does what the profile says", () => {
  expect(CHANNELS.cli.adapter).toBeUndefined();
  expect(cliPort(() => {}).capabilities).toEqual(profileOf("cli").capabilities);
});
