/**
 * Reading an OpenClaw home (src/setup/openclaw/home.ts): where it is, how
 * the paths its config names are found in a copied home, JSON5 with its
 * includes, and what a broken file does — openclaw.json stops the import
 * naming the file, line and reason; any other file becomes a note.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { diskFiles, memoryFiles } from "../../../src/setup/openclaw/files.ts";
import { homePath, openClawDir, readOpenClawHome } from "../../../src/setup/openclaw/home.ts";
import { OpenClawFileError } from "../../../src/setup/openclaw/json5.ts";

const FIXTURES = join(import.meta.dir, "fixtures");
const ENV = { HOME: "/home/alice" };

describe("where the OpenClaw home is", () => {
  test("--from, else OPENCLAW_STATE_DIR, else $OPENCLAW_HOME/.openclaw, else ~/.openclaw", () => {
    expect(openClawDir(ENV, "backup/.openclaw", "/srv")).toBe("/srv/backup/.openclaw");
    expect(openClawDir(ENV, "~/old/.openclaw")).toBe("/home/alice/old/.openclaw");
    expect(openClawDir({ ...ENV, OPENCLAW_STATE_DIR: "/data/oc", OPENCLAW_HOME: "/other" })).toBe("/data/oc");
    expect(openClawDir({ ...ENV, OPENCLAW_HOME: "/other" })).toBe("/other/.openclaw");
    expect(openClawDir({ ...ENV, OPENCLAW_HOME: "~/alt" })).toBe("/home/alice/alt/.openclaw");
    expect(openClawDir(ENV)).toBe("/home/alice/.openclaw");
  });

  test("a path under ~/.openclaw is read from the home being imported; other paths stay where they are", () => {
    expect(homePath("~/.openclaw/workspace", "/copy/.openclaw", ENV)).toBe("/copy/.openclaw/workspace");
    expect(homePath("~/notes/workspace", "/copy/.openclaw", ENV)).toBe("/home/alice/notes/workspace");
    expect(homePath("workspace-work", "/copy/.openclaw", ENV)).toBe("/copy/.openclaw/workspace-work");
    expect(homePath("~/.openclaw/workspace", "/home/alice/.openclaw", ENV)).toBe("/home/alice/.openclaw/workspace");
  });
});

describe("reading a home", () => {
  test("JSON5 with comments, trailing commas and an $include reads like JSON; .env and the env block are its variables", () => {
    const home = readOpenClawHome(diskFiles, join(FIXTURES, "json5"), ENV);
    expect(home.config.models).toEqual({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: OpenClaw's own variable reference, read as written; the import substitutes it later
      providers: { openai: { baseUrl: "https://api.openai.com/v1", api: "openai-responses", apiKey: "${OPENAI_API_KEY}" } },
    });
    expect(home.vars.OPENAI_API_KEY).toBe("sk-fixture-json5-openai-0003");
    expect(home.vars.TELEGRAM_BOT_TOKEN).toBe("7300000003:AAJson5FixtureTelegramTokenxxxxxxxxx");
    expect(home.problems).toEqual([]);
  });

  test("the full home: auth profiles, senders approved by pairing, cron jobs and the workspace under ~/.openclaw read from the copy", () => {
    const dir = join(FIXTURES, "full");
    const home = readOpenClawHome(diskFiles, dir, ENV);
    expect(home.authProfiles.map((p) => [p.id, p.type])).toEqual([
      ["openai:default", "api_key"],
      ["anthropic:me@example.com", "oauth"],
    ]);
    expect(home.authOrder).toEqual({ openai: ["openai:default"] });
    expect(home.paired).toEqual({ telegram: ["222222222"] });
    expect(home.jobs).toHaveLength(7);
    expect(home.workspace).toBe(join(dir, "workspace"));
  });

  test("a broken openclaw.json stops the import with its file, line, column and reason", () => {
    const dir = join(FIXTURES, "broken-config");
    let caught: unknown;
    try {
      readOpenClawHome(diskFiles, dir, ENV);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(OpenClawFileError);
    const error = caught as OpenClawFileError;
    expect([error.file, error.line, error.column, error.reason]).toEqual([join(dir, "openclaw.json"), 6, 5, "invalid character 'd'"]);
    expect(error.message).toBe(`${join(dir, "openclaw.json")}: line 6, column 5: invalid character 'd'`);
  });

  test("other broken files are notes with their line, and the rest of the home is read", () => {
    const home = readOpenClawHome(diskFiles, join(FIXTURES, "damaged"), ENV);
    expect(home.problems).toEqual([
      // json5 shows the offending quote escaped, as \".
      { what: "agents/main/agent/auth-profiles.json", why: String.raw`does not parse (line 1): invalid character '\"'` },
      { what: "credentials/telegram-allowFrom.json", why: "does not parse (line 1): invalid character 'o'" },
      { what: "cron/jobs.json", why: "does not parse (line 2): invalid end of input" },
    ]);
    expect(home.configFound).toBe(true);
    expect(home.jobs).toBeUndefined();
  });

  test("an $include outside the home, or a missing one, is refused naming the including file", () => {
    const files = memoryFiles({
      "/oc/openclaw.json": '{ agents: { $include: "../elsewhere.json5" } }',
      "/elsewhere.json5": "{}",
    });
    expect(() => readOpenClawHome(files, "/oc", ENV)).toThrow('/oc/openclaw.json: $include "../elsewhere.json5" points outside /oc');
    const missing = memoryFiles({ "/oc/openclaw.json": '{ agents: { $include: "./agents.json5" } }' });
    expect(() => readOpenClawHome(missing, "/oc", ENV)).toThrow('/oc/openclaw.json: $include "./agents.json5": no such file');
  });

  test("an included file's keys are merged under the ones beside the $include", () => {
    const files = memoryFiles({
      "/oc/openclaw.json": '{ agents: { $include: "./agents.json5", defaults: { model: "openai/gpt-5.1" } } }',
      "/oc/agents.json5": '{ defaults: { model: "openai/old", workspace: "~/w" }, list: [{ id: "main" }] }',
    });
    expect(readOpenClawHome(files, "/oc", ENV).config.agents).toEqual({
      defaults: { model: "openai/gpt-5.1", workspace: "~/w" },
      list: [{ id: "main" }],
    });
  });

  test("a home without openclaw.json is read for its workspace alone", () => {
    const home = readOpenClawHome(memoryFiles({ "/oc/workspace/SOUL.md": "Hi" }), "/oc", ENV);
    expect(home.configFound).toBe(false);
    expect(home.config).toEqual({});
    expect(home.workspace).toBe("/oc/workspace");
  });
});
