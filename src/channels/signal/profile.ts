/**
 * Signal, described for the rest of Fermix (see ChannelProfile in
 * src/channels/types.ts): signal-cli as a subprocess, plain text (long texts
 * still split at 4,096 for readability), deletes, any emoji as a reaction,
 * no edits. Pure data: the adapter (index.ts) is imported only when the
 * channel is served.
 */
import { MB } from "../../kernel/sizes.ts";
import { plain } from "../../present/dialects/plain.ts";
import { utf16Length } from "../../present/measure.ts";
import type { ChannelProfile } from "../types.ts";
import { findSignalCli } from "./files.ts";
import { GROUP_PREFIX } from "./inbound.ts";
import { signalSetup } from "./setup.ts";

export const signalProfile: ChannelProfile = {
  name: "signal",
  displayName: "Signal",
  title: "Signal",
  mode: "subprocess",
  text: { dialect: plain, limit: 4096, measure: utf16Length },
  capabilities: { edit: false, delete: true, react: "any", media: true, typing: true },
  streaming: "block",
  sessionOnly: false,
  local: false,
  commands: true,
  // A direct chat is the sender's own id; a group's is "group:<id>".
  isDirect: ({ chatId }) => !chatId.startsWith(GROUP_PREFIX),
  requiredKeys: ["account"],
  allowlistKey: "allowed_sender_ids",
  ownerKey: "owner_user_id",
  // Messages come from signal-cli: no replayable capture.
  acceptanceWindowMs: () => 0,
  inboundMediaCap: 100 * MB,
  // signal-cli must be there and executable, as the adapter will look for it.
  doctor(config, env) {
    const found = findSignalCli(config.fermix_channels.signal.cli_path, env);
    return [{ check: "channel signal signal-cli", status: found.ok ? "ok" : "fail", detail: found.ok ? found.path : found.reason }];
  },
  setup: signalSetup,
};
