/**
 * OpenClaw's channels as Fermix's: for each channel both have, its section
 * (the default account's view) translated by the channel's own folder
 * (OpenClawChannel, read through its setup), and who may talk — the
 * allowlist (`allowFrom`) and the senders approved by pairing — as the
 * owner and the allowed senders. OpenClaw has no owner as such: the owner
 * is the one sender allowed to run commands (`commands.allowFrom`), else
 * the only allowed sender; with several and none marked, the owner picks
 * one by hand. A channel Fermix does not have is listed, not imported.
 * Rules: https://docs.openclaw.ai/gateway/configuration-reference#channels.
 */
import type { OpenClawChannel, OpenClawSource } from "../../channels/openclaw.ts";
import { profileOf } from "../../channels/registry.ts";
import { CHANNEL_NAMES, type ChannelName } from "../../config/schema.ts";
import { valueProblem } from "../validate.ts";
import type { OpenClawHome } from "./home.ts";
import type { ConfigItem } from "./items.ts";
import { objectAt, objectOf } from "./json5.ts";
import { type ImportRow, row } from "./rows.ts";

/** Keys of `channels` that are settings for all of them, not channels. */
const NOT_CHANNELS = new Set(["defaults", "modelByChannel"]);

export interface ImportedChannel {
  name: ChannelName;
  title: string;
  openclaw: OpenClawChannel;
  /** The owner's id, when the import names one. */
  owner?: string;
  /** Whether the import turns it on. */
  on: boolean;
}

export interface ChannelsPlan {
  items: ConfigItem[];
  rows: ImportRow[];
  channels: ImportedChannel[];
}

const list = (value: unknown): string[] => (Array.isArray(value) ? value.map((v) => String(v).trim()).filter(Boolean) : []);

export function planChannels(home: OpenClawHome, source: OpenClawSource): ChannelsPlan {
  const plan: ChannelsPlan = { items: [], rows: [], channels: [] };
  const sections = objectAt(home.config, "channels") ?? {};
  for (const key of Object.keys(sections)) {
    if (NOT_CHANNELS.has(key) || !objectOf(sections[key])) continue;
    const known = (CHANNEL_NAMES as readonly string[]).includes(key) && profileOf(key as ChannelName).setup?.openclaw;
    if (!known) plan.rows.push(row("skipped", `channel ${key}`, `Fermix has no ${key} channel`));
  }
  for (const name of CHANNEL_NAMES) {
    const openclaw = profileOf(name).setup?.openclaw;
    const section = objectOf(sections[name]);
    if (openclaw && section) planChannel(plan, home, source, name, openclaw, section);
  }
  return plan;
}

function planChannel(
  plan: ChannelsPlan,
  home: OpenClawHome,
  source: OpenClawSource,
  name: ChannelName,
  openclaw: OpenClawChannel,
  base: Record<string, unknown>,
): void {
  const profile = profileOf(name);
  const title = profile.title;
  const at = (key: string) => `fermix_channels.${name}.${key}`;
  if (base.enabled === false) {
    plan.rows.push(row("skipped", title, "turned off in OpenClaw"));
    return;
  }
  const section = defaultAccount(plan, title, base);
  const translated = openclaw.translate(section, source);
  for (const note of translated.skipped) plan.rows.push(row("skipped", note.what, note.why));
  if (section.groups !== undefined || section.groupPolicy !== undefined || section.groupAllowFrom !== undefined) {
    plan.rows.push(row("skipped", `${title} group rules`, "Fermix has no per-group rules (groups, groupPolicy, groupAllowFrom)"));
  }

  // Who may talk: allowFrom and, unless DMs are open or off, the senders approved by pairing.
  const policy = typeof section.dmPolicy === "string" ? section.dmPolicy : "pairing";
  const entries = [...list(section.allowFrom), ...(policy === "pairing" || policy === "allowlist" ? (home.paired[name] ?? []) : [])];
  const senders: string[] = [];
  if (policy === "disabled") plan.rows.push(row("skipped", `${title} allowlist`, "direct messages were turned off in OpenClaw (dmPolicy disabled)"));
  else {
    for (const entry of entries) {
      if (entry === "*") {
        plan.rows.push(row("skipped", `${title} "*" (anyone)`, "Fermix answers only its owner and the senders listed"));
        continue;
      }
      const id = openclaw.senderId(entry);
      if (id === undefined) plan.rows.push(row("skipped", `${title} sender ${entry}`, `not a ${title} id Fermix can match (names and usernames change)`));
      else if (!senders.includes(id)) senders.push(id);
    }
  }
  const commands = objectAt(home.config, "commands.allowFrom");
  const operators = [...new Set(list(commands?.[name] ?? commands?.["*"]).flatMap((e) => openclaw.senderId(e) ?? []))];
  const owner = operators.length === 1 ? operators[0] : senders.length === 1 ? senders[0] : undefined;
  const others = senders.filter((s) => s !== owner);

  // Each value checked as the config loader will check it: one it refuses is listed, not written.
  for (const [key, value] of Object.entries(translated.values)) {
    const problem = valueProblem(at(key), value);
    if (problem) {
      plan.rows.push(row("skipped", `${title} ${key.replaceAll("_", " ")}`, problem));
      delete translated.values[key];
    }
  }
  const credentials = Object.keys(translated.values);
  if (credentials.length > 0) {
    plan.items.push({
      what: `${title} settings`,
      detail: credentials.map((k) => k.replaceAll("_", " ")).join(", "),
      changes: credentials.map((k) => ({ path: at(k), value: translated.values[k] })),
    });
  }
  if (owner && profile.ownerKey) plan.items.push({ what: `${title} owner`, detail: owner, changes: [{ path: at(profile.ownerKey), value: owner }] });
  if (others.length > 0 && profile.allowlistKey) {
    plan.items.push({ what: `${title} allowed senders`, detail: others.join(", "), changes: [{ path: at(profile.allowlistKey), value: others }] });
  }
  const setFlag = (key: string) => `fermix setup --yes --reconfigure --${name}-${key} <id>`;
  if (!owner && others.length > 1) plan.rows.push(row("manual", `${title} owner`, `Choose the owner among the allowed senders: ${setFlag("owner")}`));

  const off = translated.off ?? (senders.length === 0 ? "nobody is allowed to talk to it yet (no allowFrom, nobody approved by pairing)" : undefined);
  if (off) {
    plan.rows.push(row("skipped", `${title} turned on`, `left off: ${off}`));
    if (senders.length === 0 && !translated.off)
      plan.rows.push(row("manual", `${title} owner`, `Name the owner, then turn it on: ${setFlag("owner")} --${name}-enabled true`));
    // A channel that is on unless told otherwise is written off, as setup does on a fresh home.
    if (profile.setup?.offUntilNamed)
      plan.items.push({ what: `${title} turned off`, detail: "written off until it can be served", changes: [{ path: at("enabled"), value: false }] });
  } else {
    plan.items.push({ what: `${title} turned on`, detail: "enabled", changes: [{ path: at("enabled"), value: true }] });
  }
  for (const step of translated.manual) plan.rows.push(row("manual", title, step));
  plan.channels.push({ name, title, openclaw, on: !off, ...(owner ? { owner } : {}) });
}

/** The keys of the account Fermix serves (OpenClaw's default account over the shared keys); other accounts are listed. */
function defaultAccount(plan: ChannelsPlan, title: string, base: Record<string, unknown>): Record<string, unknown> {
  const accounts = objectOf(base.accounts);
  const { accounts: _ignored, ...shared } = base;
  if (!accounts || Object.keys(accounts).length === 0) return shared;
  const ids = Object.keys(accounts).sort();
  const chosen =
    typeof base.defaultAccount === "string" && accounts[base.defaultAccount] ? base.defaultAccount : accounts.default !== undefined ? "default" : ids[0]!;
  for (const id of ids) {
    if (id !== chosen) plan.rows.push(row("skipped", `${title} account ${id}`, "Fermix serves one account per channel; the default one was imported"));
  }
  return { ...shared, ...(objectOf(accounts[chosen]) ?? {}) };
}
