/**
 * The channel adapters this build has, by name: the daemon starts the
 * enabled, configured ones from here. A channel is a folder implementing
 * ChannelAdapter plus one line in this table.
 */
import type { ChannelName, Config } from "../config/schema.ts";
import type { ChannelAdapter } from "./types.ts";

export type AdapterFactory = (config: Config) => ChannelAdapter;

export const ADAPTERS: Partial<Record<ChannelName, AdapterFactory>> = {};
