/**
 * The command line (`fermix ask`, `fermix chat`), described for the rest of
 * Fermix (see ChannelProfile in src/channels/types.ts): no config table and
 * no adapter (the daemon's control socket or the command itself serves it),
 * the local user is the owner, every message is printed for good, and
 * nothing can be delivered once the command has ended.
 */
import { markdown } from "../../present/dialects/markdown.ts";
import { utf16Length } from "../../present/measure.ts";
import type { ChannelProfile } from "../types.ts";

export const cliProfile: ChannelProfile = {
  name: "cli",
  displayName: "the terminal",
  title: "The command line",
  mode: null,
  text: { dialect: markdown, limit: Number.POSITIVE_INFINITY, measure: utf16Length },
  capabilities: { edit: false, delete: false, react: false, media: true, typing: true },
  streaming: null,
  sessionOnly: true,
  local: true,
  commands: true,
  isDirect: () => true,
  requiredKeys: [],
  acceptanceWindowMs: () => 0,
  // Nothing is downloaded: the terminal sends text.
  inboundMediaCap: 0,
};
