/**
 * The editor socket (ACP), described for the rest of Fermix (see
 * ChannelProfile in src/channels/types.ts): a local socket whose file mode
 * is its authorization, Markdown of any length streamed by the session
 * itself, no slash commands, and nothing to deliver once the editor is gone.
 * Pure data: the adapter (index.ts) is imported only when it is served.
 */
import { MB } from "../../kernel/sizes.ts";
import { markdown } from "../../present/dialects/markdown.ts";
import { utf16Length } from "../../present/measure.ts";
import type { ChannelProfile } from "../types.ts";
import { acpSetup } from "./setup.ts";

export const acpProfile: ChannelProfile = {
  name: "acp",
  displayName: "the editor",
  title: "The editor socket (ACP)",
  mode: "socket",
  text: { dialect: markdown, limit: Number.POSITIVE_INFINITY, measure: utf16Length },
  // Text only, streamed; files are named, never sent.
  capabilities: { edit: false, delete: false, react: false, media: true, typing: false },
  streaming: null,
  sessionOnly: true,
  local: true,
  commands: false,
  isDirect: () => true,
  requiredKeys: [],
  acceptanceWindowMs: () => 0,
  inboundMediaCap: 20 * MB,
  setup: acpSetup,
};
