/**
 * Planning an import (src/setup/openclaw/plan.ts) on the fixture homes
 * against a Fermix home described as data: what is written, what the table
 * says, that no row holds a credential, that what Fermix already has is
 * kept unless --force, and that planning again over the result writes
 * nothing.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DEFAULT_SOUL } from "../../../src/agent/prompt.ts";
import { diskFiles, memoryFiles } from "../../../src/setup/openclaw/files.ts";
import { readOpenClawHome } from "../../../src/setup/openclaw/home.ts";
import { type FermixState, type ImportPlan, planImport, writesNothing } from "../../../src/setup/openclaw/plan.ts";
import type { Job } from "../../../src/store/jobs.ts";

const FIXTURES = join(import.meta.dir, "fixtures");
const ENV = { HOME: "/home/nobody" };
const NOW = Date.parse("2026-06-01T12:00:00Z");

const empty = (over: Partial<FermixState> = {}): FermixState => ({
  configPath: "/fermix/config.toml",
  configText: "",
  secrets: {},
  soul: null,
  skills: {},
  memories: new Set(),
  file: () => null,
  jobs: [],
  timezone: "UTC",
  now: NOW,
  ...over,
});

const plan = (fixture: string, state: FermixState = empty(), force = false) =>
  planImport(readOpenClawHome(diskFiles, join(FIXTURES, fixture), ENV), diskFiles, ENV, state, force);

const rowsOf = (p: ImportPlan, outcome: string) => p.rows.filter((r) => r.outcome === outcome).map((r) => r.what);

/** The Fermix home after writing `p` over `state`. */
function after(p: ImportPlan, state: FermixState): FermixState {
  const files = new Map(p.files.map((f) => [f.path, f.bytes]));
  const skills = { ...state.skills, ...Object.fromEntries(p.skills.map((s) => [s.name, s.text])) };
  const jobs = [
    ...state.jobs,
    ...p.jobs.map((j, i) => ({ ...j, id: i + 1, runDueAt: null, state: "pending", runs: 0, lastRunAt: null, lastOutcome: null, createdAt: NOW }) as Job),
  ];
  return empty({
    configText: p.setup.text,
    secrets: { ...state.secrets, ...p.setup.secrets },
    soul: p.soul?.text ?? state.soul,
    skills,
    memories: new Set([...state.memories, ...p.facts]),
    file: (path) => files.get(path) ?? state.file(path),
    jobs,
  });
}

describe("the full home into an empty Fermix", () => {
  const p = plan("full");

  test("credentials go to the secret store; config.toml and the table name them without their values", () => {
    expect(p.setup.secrets).toEqual({
      "fermix_core.providers.openai.api_key": "sk-fixture-full-openai-0002",
      "fermix_channels.telegram.bot_token": "7200000002:AAFullFixtureTelegramTokenxxxxxxxxxx",
      "fermix_channels.slack.bot_token": "xoxb-0000000001-0000000002-FixtureFullSlackToken",
      "fermix_channels.slack.signing_secret": "fixture-full-slack-signing-secret-0000",
      "fermix_channels.discord.bot_token": "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfAkE0.fixture-full-discord-token-0000",
    });
    const shown = `${p.setup.text}\n${JSON.stringify(p.rows)}`;
    for (const secret of Object.values(p.setup.secrets)) expect(shown).not.toContain(secret);
  });

  test("the config loads: the provider is primary with its model's window and vision; owners and allowlists per channel", () => {
    const { config } = p.setup.resolved;
    expect(config.fermix_core.timezone).toBe("Europe/Paris");
    expect(config.fermix_core.providers.openai).toMatchObject({ api: "responses", model: "gpt-5.1", primary: true, context_window: 400_000, vision: true });
    expect(config.fermix_channels.telegram).toMatchObject({ enabled: true, owner_user_id: "111111111", allowed_user_ids: ["222222222"] });
    expect(config.fermix_channels.slack).toMatchObject({ enabled: true, owner_user_id: "U0FIXOWNER" });
    expect(config.fermix_channels.discord).toMatchObject({ enabled: true, owner_user_id: "1200000000000000001" });
    expect(config.fermix_channels.signal).toMatchObject({ enabled: true, account: "+15550001111", owner_user_id: "+15550002222" });
    // WhatsApp's linked device cannot become the Cloud API: who may talk carries over, the channel stays off.
    expect(config.fermix_channels.whatsapp).toMatchObject({ enabled: false, owner_user_id: "15555550123" });
  });

  test("the table lists what has no Fermix equivalent, and the owner's steps", () => {
    expect(rowsOf(p, "skipped")).toEqual(
      expect.arrayContaining([
        "channel imessage",
        "WhatsApp turned on",
        "Telegram sender @somebody",
        "auth profile anthropic:me@example.com",
        "skill Bad_Name",
        'job "Odd interval"',
        'job "Webhook report"',
        'job "Paused"',
        'job "Old reminder"',
      ]),
    );
    expect(rowsOf(p, "manual")).toEqual(expect.arrayContaining(["WhatsApp", "Slack", "AGENTS.md", "TOOLS.md"]));
  });

  test("the persona, skills, facts, files and jobs", () => {
    expect(p.soul?.text.startsWith("# SOUL.md - Who You Are")).toBe(true);
    expect(p.soul?.note).toBe("imported from OpenClaw (SOUL.md, IDENTITY.md, USER.md)");
    expect(p.skills.map((s) => [s.name, s.files.map((f) => f.path)])).toEqual([
      ["weekly-report", ["scripts/collect.sh"]],
      ["tidy-downloads", []],
    ]);
    expect(p.facts).toHaveLength(4);
    expect(p.files.map((f) => f.path)).toEqual(["openclaw/AGENTS.md", "openclaw/TOOLS.md", "memory/2026-01-05.md", "memory/2026-01-06.md"]);
    expect(p.jobs.map((j) => [j.request, j.schedule, j.target.channel, j.target.chatId, j.origin.senderId])).toEqual([
      ["Summarize overnight updates.", "0 7 * * *", "telegram", "111111111", "111111111"],
      ["Remind me to renew the passport.", null, "telegram", "111111111", "111111111"],
      ["Check the build status.", "0 * * * *", "slack", "C0FIXBUILD", "U0FIXOWNER"],
    ]);
  });

  test("planned again over what it wrote, it writes nothing and every row is unchanged, skipped or left to the owner", () => {
    const again = plan("full", after(p, empty()));
    expect(writesNothing(again)).toBe(true);
    expect(rowsOf(again, "imported")).toEqual([]);
    expect(rowsOf(again, "unchanged").length).toBeGreaterThan(20);
  });
});

describe("what Fermix already has", () => {
  test("a different owner, a changed SOUL.md and another skill of the same name are kept unless --force", () => {
    const state = empty({
      configText: '[fermix_channels.telegram]\nowner_user_id = "999"\n',
      soul: "# Mine\n",
      skills: { "weekly-report": "---\nname: weekly-report\ndescription: mine\n---\n" },
    });
    const kept = plan("full", state);
    expect(kept.rows.find((r) => r.what === "Telegram owner")).toEqual({
      outcome: "skipped",
      what: "Telegram owner",
      detail: "Fermix already has fermix_channels.telegram.owner_user_id set otherwise (--force replaces it)",
    });
    expect(kept.setup.resolved.config.fermix_channels.telegram.owner_user_id).toBe("999");
    expect(kept.soul).toBeUndefined();
    expect(kept.skills.map((s) => s.name)).toEqual(["tidy-downloads"]);

    const forced = plan("full", state, true);
    expect(forced.setup.resolved.config.fermix_channels.telegram.owner_user_id).toBe("111111111");
    expect(forced.soul).toBeDefined();
    expect(forced.skills.map((s) => s.name)).toEqual(["weekly-report", "tidy-downloads"]);
  });

  test("the shipped default SOUL.md is replaced without --force: nobody has shaped it yet", () => {
    expect(plan("minimal", empty({ soul: DEFAULT_SOUL })).soul?.text).toContain("You are Pip");
  });

  test("a job Fermix already has is not added twice", () => {
    const first = plan("full");
    const again = plan("full", empty({ jobs: after(first, empty()).jobs }));
    expect(again.jobs).toEqual([]);
    expect(again.rows.filter((r) => r.what.startsWith("job ") && r.outcome === "unchanged")).toHaveLength(3);
  });
});

describe("a home copied from elsewhere", () => {
  test("a token file or an agent folder outside the OpenClaw home is not read: this machine's files are never sent on as credentials", () => {
    const files = memoryFiles({
      "/copy/.openclaw/openclaw.json": JSON.stringify({
        agents: { defaults: { model: "openai/gpt-5.1" }, list: [{ id: "main", agentDir: "/srv/agent" }] },
        models: { providers: { openai: { baseUrl: "https://proxy.example/v1", api: "openai-responses" } } },
        channels: { telegram: { tokenFile: "/home/alice/secret-token", apiRoot: "https://proxy.example", allowFrom: ["111"] } },
      }),
      "/home/alice/secret-token": "9:AAsecretsecretsecretsecretsecret",
      "/srv/agent/auth-profiles.json": JSON.stringify({
        version: 1,
        profiles: { "openai:default": { type: "api_key", provider: "openai", key: "sk-alice-real-key" } },
      }),
    });
    const home = readOpenClawHome(files, "/copy/.openclaw", { HOME: "/home/alice" });
    const p = planImport(home, files, { HOME: "/home/alice" }, empty(), false);
    expect(p.setup.secrets).toEqual({});
    expect(p.rows).toEqual(
      expect.arrayContaining([
        { outcome: "skipped", what: "Telegram tokenFile", detail: "it cannot be read: it must be a regular file inside the OpenClaw home" },
        {
          outcome: "skipped",
          what: "agents.list[].agentDir",
          detail: "/srv/agent is outside /copy/.openclaw: its auth profiles are not read",
        },
      ]),
    );
  });
});
