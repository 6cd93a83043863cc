/**
 * Signal in setup (see ChannelSetup in src/channels/setup.ts): its keys, and
 * the wizard's questions — the number registered with signal-cli, where
 * signal-cli is, and the owner's number or UUID.
 */
import { askInTurn, type ChannelSetup } from "../setup.ts";
import { signalOpenClaw } from "./openclaw.ts";

export const signalSetup: ChannelSetup = {
  label: "Signal",
  openclaw: signalOpenClaw,
  hint: "through signal-cli and a registered number",
  fields: [
    { key: "enabled", kind: "boolean", help: "serve Signal (through signal-cli)" },
    { key: "account", kind: "string", help: "the bot's registered number, e.g. +15550001111", label: "Account number" },
    { key: "cli_path", kind: "string", help: "the signal-cli executable (default signal-cli on PATH)", label: "signal-cli path", advanced: true },
    { key: "owner_user_id", kind: "string", help: "your Signal number or UUID", flag: "owner", label: "Owner id" },
    { key: "allowed_sender_ids", kind: "list", help: "other numbers or UUIDs that may talk to it, comma-separated", label: "Others allowed" },
  ],
  ask: askInTurn([
    { text: "account", label: "The bot's Signal number, registered with signal-cli (e.g. +15550001111)" },
    { text: "cli_path", label: "signal-cli executable", optional: true },
    { owner: "For Signal it is your number or your UUID." },
  ]),
};
