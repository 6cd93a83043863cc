/**
 * What a channel's or a provider's translation may read besides openclaw.json
 * (OpenClawSource in src/channels/openclaw.ts): credentials as OpenClaw
 * writes them — a plain string, `${VAR}` substituted, or an env SecretRef —
 * the variables OpenClaw would see (its `env` block and `.env`, then the
 * shell running the import, as OpenClaw itself reads them:
 * https://docs.openclaw.ai/gateway/configuration-reference#environment),
 * and files the config names.
 */
import type { OpenClawSource } from "../../channels/openclaw.ts";
import type { Env } from "../../config/load.ts";
import { type HomeFiles, textOf } from "./files.ts";
import { homePath, insideDir, type OpenClawHome } from "./home.ts";
import { objectOf } from "./json5.ts";

const VARIABLE = /(\$?)\$\{([A-Z_][A-Z0-9_]*)\}/g;

export function openClawSource(home: OpenClawHome, files: HomeFiles, env: Env): OpenClawSource {
  const variable = (name: string): string | undefined => {
    const value = home.vars[name] ?? env[name];
    return value !== undefined && value !== "" ? value : undefined;
  };
  const substitute = (text: string): string | undefined => {
    let missing = false;
    const out = text.replace(VARIABLE, (_whole, escaped: string, name: string) => {
      if (escaped) return `\${${name}}`;
      const value = variable(name);
      if (value === undefined) missing = true;
      return value ?? "";
    });
    return missing || out.trim() === "" ? undefined : out.trim();
  };
  return {
    env: variable,
    secret(value) {
      if (typeof value === "string") return substitute(value);
      const ref = objectOf(value);
      if (ref?.source === "env" && typeof ref.id === "string") return variable(ref.id);
      return undefined;
    },
    // Only inside the OpenClaw home: a home copied from elsewhere must not send this machine's files (~/.ssh/…) on as a token.
    readFile: (path) => {
      const absolute = homePath(path, home.dir, env);
      return insideDir(home.dir, absolute) ? textOf(files.read(absolute)) : undefined;
    },
  };
}

/** A string setting with `${VAR}` substituted; undefined when absent or a variable is unset. */
export function settingText(source: OpenClawSource, value: unknown): string | undefined {
  return typeof value === "string" ? source.secret(value) : undefined;
}
