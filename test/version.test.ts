/**
 * One project URL: the service unit's Documentation=, the User-Agent sent to
 * Discord and install.sh's default release URL all name the same place
 * (PROJECT_URL in src/version.ts; install.sh keeps its own copy), and no
 * other GitHub address of the project is written anywhere in the repository.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DiscordApi } from "../src/channels/discord/api.ts";
import { systemdUnit } from "../src/setup/service.ts";
import { PROJECT_URL, VERSION } from "../src/version.ts";

const ROOT = join(import.meta.dir, "..");

test("install.sh downloads releases from the project's own URL", () => {
  const installer = readFileSync(join(ROOT, "install.sh"), "utf8");
  expect(installer.match(/^DEFAULT_RELEASE_URL="([^"]+)"$/m)?.[1]).toBe(`${PROJECT_URL}/releases`);
});

test("the service unit documents itself with the project's URL", () => {
  const unit = systemdUnit({
    platform: "systemd",
    userHome: "/home/alice",
    fermixHome: "/home/alice/.fermix",
    execPath: "/home/alice/.local/bin/fermix",
    environment: {},
    uid: 501,
    user: "alice",
    run: async () => ({ code: 0, stdout: "", stderr: "" }),
    configHome: "/home/alice/.config",
  });
  expect(unit).toContain(`\nDocumentation=${PROJECT_URL}\n`);
});

test("Discord is told who calls with the project's URL, as it asks bots to", async () => {
  const agents: Array<string | null> = [];
  const api = new DiscordApi({
    token: "token",
    apiBase: "http://127.0.0.1:1/api/v10",
    fetch: (async (_url: string, init?: RequestInit) => {
      agents.push(new Headers(init?.headers).get("user-agent"));
      return Response.json({ url: "wss://gateway.invalid", shards: 1, session_start_limit: {} });
    }) as typeof fetch,
  });
  await api.getGatewayBot();
  expect(agents).toEqual([`DiscordBot (${PROJECT_URL}, ${VERSION})`]);
});

test("no other GitHub address of the project is written in the repository", async () => {
  const owner = new URL(PROJECT_URL).pathname.split("/")[1];
  const stray: string[] = [];
  for await (const file of new Bun.Glob("{src/**/*.ts,docs/**/*.md,README.md,install.sh,build.ts,scripts/**/*.ts,bench/**/*.ts,.ci/**/*,package.json}").scan({
    cwd: ROOT,
    dot: true,
  })) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const match of text.matchAll(/github\.com\/([\w.-]+)\/fermix\b/g)) if (match[1] !== owner) stray.push(`${file}: ${match[0]}`);
  }
  expect(stray).toEqual([]);
});
