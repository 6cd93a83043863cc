/** The dialect registry: one renderer per platform family. */
import type { Dialect, DialectName } from "./base.ts";
import { discord } from "./discord.ts";
import { signal } from "./signal.ts";
import { slack } from "./slack.ts";
import { telegram } from "./telegram.ts";
import { whatsapp } from "./whatsapp.ts";

/** Every dialect by name. */
export const DIALECTS: Readonly<Record<DialectName, Dialect>> = { telegram, discord, slack, whatsapp, signal };

export type { Dialect, DialectName } from "./base.ts";
