/**
 * The editor socket (ACP) in setup (see ChannelSetup in src/channels/setup.ts):
 * one switch, set by a flag; the wizard and the web page do not ask (it is
 * on by default and needs no credentials).
 */
import type { ChannelSetup } from "../setup.ts";

export const acpSetup: ChannelSetup = {
  label: "ACP (editors)",
  fields: [{ key: "enabled", kind: "boolean", help: "serve editors over the ACP socket (on by default)" }],
};
