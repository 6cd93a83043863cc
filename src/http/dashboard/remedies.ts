/**
 * The health report's failures in plain words, each with what fixes it: a
 * command to run or a config key to set. Pure: a failure line in, an
 * explanation out; a line this does not recognise is shown as it is, with
 * `fermix doctor` as the way to learn more. A channel's title and credential
 * come from its profile.
 */
import { CHANNELS } from "../../channels/registry.ts";
import type { GatewayChannel } from "../../config/schema.ts";

export interface Fix {
  kind: "command" | "key";
  /** The command line, or the dotted config key. */
  text: string;
}

export interface Explained {
  /** What is wrong, in a sentence. */
  words: string;
  fixes: Fix[];
}

const command = (text: string): Fix => ({ kind: "command", text });
const key = (text: string): Fix => ({ kind: "key", text });
const SETUP = command("fermix setup --web");
const DOCTOR = command("fermix doctor");

/** Names in a sentence: "a", "a and b", "a, b, and c". */
const inWords = (names: readonly string[]) => new Intl.ListFormat("en", { style: "long", type: "conjunction" }).format(names);

/** The profile of the channel a line names, if it names one. */
const profileNamed = (name: string) => (Object.hasOwn(CHANNELS, name) ? CHANNELS[name as GatewayChannel].profile : undefined);

/** A channel's name as a person writes it (its profile's title). */
export const channelTitle = (name: string) => profileNamed(name)?.title ?? name;

export function explainFailure(line: string): Explained {
  if (line.startsWith("no config.toml")) {
    return { words: "Fermix has no configuration yet: no model to answer with, no channel to listen on.", fixes: [SETUP, command("fermix setup")] };
  }
  if (line === "no provider configured") {
    return { words: "No model provider is configured, so no message can be answered.", fixes: [SETUP, key("fermix_core.providers.<name>.model")] };
  }
  const provider = /^provider ([^:]+): (.*)$/.exec(line);
  if (provider) {
    const [, name, rest] = provider as unknown as [string, string, string];
    if (rest === "no api_key") {
      return {
        words: `The model provider “${name}” has no API key.`,
        fixes: [key(`fermix_core.providers.${name}.api_key`), command("fermix setup --reconfigure --api-key …")],
      };
    }
    // The rest is the fault's class and status (src/kernel/fault-line.ts): the provider's own words never reach health.
    const refusedKey = /refused the key/.test(rest);
    return {
      words: `The model provider “${name}” is failing: ${rest}.`,
      fixes: refusedKey
        ? [key(`fermix_core.providers.${name}.api_key`), DOCTOR]
        : [key(`fermix_core.providers.${name}.base_url`), key(`fermix_core.providers.${name}.api_key`), DOCTOR],
    };
  }
  const channel = /^channel ([a-z]+): (.*)$/.exec(line);
  if (channel) {
    const [, name, rest] = channel as unknown as [string, string, string];
    const title = channelTitle(name);
    const missing = /^missing (.*)$/.exec(rest);
    if (missing) {
      const keys = missing[1]!.split(", ");
      return {
        words: `${title} is turned on but ${inWords(keys)} ${keys.length > 1 ? "are" : "is"} not set.`,
        fixes: keys.map((k) => key(`fermix_channels.${name}.${k}`)),
      };
    }
    const refused = /^refused: (.*)$/.exec(rest);
    if (refused) {
      return {
        words: `${title} is turned on but not served: ${refused[1]}.`,
        fixes: [key(`fermix_channels.${name}.owner_user_id`), SETUP],
      };
    }
    const [status, ...detailParts] = rest.split(": ");
    const detail = detailParts.join(": ");
    const said = detail ? `: ${detail}` : "";
    if (/token rejected|did not accept the (bot|access) token|refused the key/i.test(detail)) {
      const credential = profileNamed(name)?.credentialKey ?? "bot_token";
      return { words: `${title} refused the ${credential.replace("_", " ")}${said}.`, fixes: [key(`fermix_channels.${name}.${credential}`), SETUP] };
    }
    if (/sends failing/.test(detail)) {
      return { words: `${title} is not accepting replies right now${said}. Replies wait in the outbox and go out when it is back.`, fixes: [DOCTOR] };
    }
    if (status === "starting") return { words: `${title} is still connecting${said}.`, fixes: [] };
    return { words: `${title} is ${status}${said}.`, fixes: [DOCTOR, command("fermix service logs")] };
  }
  const mcp = /^mcp server ([^:]+): (.*)$/.exec(line);
  if (mcp) {
    const [, name, rest] = mcp as unknown as [string, string, string];
    if (rest === "starting") return { words: `The tool server “${name}” is still connecting; its tools come when it is up.`, fixes: [] };
    return {
      words: `The tool server “${name}” is not available (${rest}); its tools are withdrawn meanwhile.`,
      fixes: [key(`fermix_core.mcp.servers.${name}`), DOCTOR, command("fermix service logs")],
    };
  }
  if (line.startsWith("database")) return { words: "The database is not open.", fixes: [DOCTOR] };
  if (line.startsWith("memory store")) return { words: `Long-term memory is not answering (${line.slice("memory store: ".length)}).`, fixes: [DOCTOR] };
  return { words: line, fixes: [DOCTOR] };
}
