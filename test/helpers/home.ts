/** A private temporary Fermix home per test, with an env that points at it. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestHome {
  home: string;
  env: Record<string, string | undefined>;
  writeConfig(toml: string): void;
  cleanup(): void;
}

export function makeHome(extraEnv: Record<string, string | undefined> = {}): TestHome {
  const root = mkdtempSync(join(tmpdir(), "fermix-home-"));
  const home = join(root, ".fermix");
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: root,
    FERMIX_HOME: home,
    FERMIX_SECRET_STORE: "file",
    NO_COLOR: "1",
    ...extraEnv,
  };
  return {
    home,
    env,
    writeConfig(toml: string) {
      mkdirSync(home, { recursive: true, mode: 0o700 });
      writeFileSync(join(home, "config.toml"), toml);
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A config with one keyed provider and every channel off: the smallest home that is `ready`. */
export const READY_CONFIG = `
[fermix_core.providers.openai]
model = "gpt-5.1"
api_key = "sk-test-not-a-real-key-000000"

[fermix_channels.telegram]
enabled = false

[fermix_channels.acp]
enabled = false
`;
