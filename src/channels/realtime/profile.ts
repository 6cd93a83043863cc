/**
 * Realtime voice, described for the rest of Fermix (see ChannelProfile in
 * src/channels/types.ts): the owner talking live with the assistant from a
 * companion — `fermix talk`, the /talk page, an app on
 * `<home>/realtime.sock`. It is no configured channel (its settings are
 * `[fermix_core.realtime]`) and no turn goes through the gateway's
 * pipeline: what it shares with the others is the owner's identity (a local
 * surface: the socket's file mode, or the page's Host check and token, is
 * the authorization), the role table's tools and the conversation history.
 * Notices (an access request with its Approve and Deny buttons) go to the
 * companion while it is connected; nothing is delivered later.
 */
import { markdown } from "../../present/dialects/markdown.ts";
import { utf16Length } from "../../present/measure.ts";
import type { ChannelProfile } from "../types.ts";

export const realtimeProfile: ChannelProfile = {
  name: "realtime",
  displayName: "realtime voice",
  title: "Realtime voice",
  mode: "socket",
  text: { dialect: markdown, limit: Number.POSITIVE_INFINITY, measure: utf16Length },
  // Spoken answers; notices carry buttons the companion shows; no file is sent to a speaker.
  capabilities: { edit: false, delete: false, react: false, media: false, typing: false, buttons: true },
  streaming: null,
  sessionOnly: true,
  local: true,
  commands: false,
  isDirect: () => true,
  requiredKeys: [],
  acceptanceWindowMs: () => 0,
  // Audio streams to the provider; nothing is downloaded.
  inboundMediaCap: 0,
};
