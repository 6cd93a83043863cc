/**
 * Where credentials live: the OS keychain through `Bun.secrets` (service
 * `fermix`) when one answers, else `<home>/secrets.toml` with mode 0600. On a
 * headless server the file is the normal case: `Bun.secrets` needs a
 * desktop keyring (the Secret Service over D-Bus), which a server lacks.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Env } from "./load.ts";
import { getPath, setPath } from "./load.ts";

export const KEYCHAIN_SERVICE = "fermix";

export interface SecretStore {
  readonly kind: "keychain" | "file";
  /** Human description for doctor: which store, and where. */
  readonly location: string;
  get(path: string): Promise<string | undefined>;
  set(path: string, value: string): Promise<void>;
  delete(path: string): Promise<void>;
}

/** Secrets in the OS keychain, one entry per dotted config path. */
export class KeychainStore implements SecretStore {
  readonly kind = "keychain" as const;
  readonly location = `OS keychain (service "${KEYCHAIN_SERVICE}")`;

  async get(path: string): Promise<string | undefined> {
    return (await Bun.secrets.get({ service: KEYCHAIN_SERVICE, name: path })) ?? undefined;
  }
  async set(path: string, value: string): Promise<void> {
    await Bun.secrets.set({ service: KEYCHAIN_SERVICE, name: path, value });
  }
  async delete(path: string): Promise<void> {
    await Bun.secrets.delete({ service: KEYCHAIN_SERVICE, name: path });
  }
}

/** Secrets in a TOML file shaped like config.toml, readable only by its owner. */
export class FileStore implements SecretStore {
  readonly kind = "file" as const;
  readonly location: string;

  constructor(private readonly file: string) {
    this.location = file;
  }

  async get(path: string): Promise<string | undefined> {
    const value = getPath(this.read(), path);
    return typeof value === "string" && value !== "" ? value : undefined;
  }

  async set(path: string, value: string): Promise<void> {
    const table = this.read();
    setPath(table, path, value);
    this.write(table);
  }

  async delete(path: string): Promise<void> {
    const table = this.read();
    const parts = path.split(".");
    const parent = getPath(table, parts.slice(0, -1).join("."));
    if (parent && typeof parent === "object") delete (parent as Record<string, unknown>)[parts.at(-1)!];
    this.write(table);
  }

  private read(): Record<string, unknown> {
    if (!existsSync(this.file)) return {};
    return Bun.TOML.parse(readFileSync(this.file, "utf8")) as Record<string, unknown>;
  }

  private write(table: Record<string, unknown>): void {
    // Write a 0600 temp file and rename it, so the secrets are never readable by others, even briefly.
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, Bun.TOML.stringify(table), { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }
}

/**
 * The store to use: `FERMIX_SECRET_STORE=file|keychain` forces one; otherwise
 * the keychain when a probe read succeeds, else the file.
 */
export async function openSecretStore(secretsFile: string, env: Env): Promise<SecretStore> {
  const forced = env.FERMIX_SECRET_STORE;
  if (forced === "file") return new FileStore(secretsFile);
  const keychain = new KeychainStore();
  if (forced === "keychain") return keychain;
  try {
    await keychain.get("__probe__");
    return keychain;
  } catch {
    return new FileStore(secretsFile);
  }
}

/** Read every listed secret; a store that fails mid-way yields what it had. */
export async function readSecrets(store: SecretStore, paths: string[]): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const path of paths) {
    const value = await store.get(path);
    if (value !== undefined) found[path] = value;
  }
  return found;
}
