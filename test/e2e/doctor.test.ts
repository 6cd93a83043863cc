/** `fermix doctor` from the compiled binary: a row per concern, exit 1 when any fails. */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { MemoryStore } from "../../src/store/memory.ts";
import { runFermix } from "../helpers/binary.ts";
import { makeHome, READY_CONFIG, type TestHome } from "../helpers/home.ts";

interface Row {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

const homes: TestHome[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

async function freePort(): Promise<string> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return String(port);
}

async function doctor(config: string | null, extraEnv: Record<string, string> = {}) {
  const h = makeHome({ PORT: await freePort(), ...extraEnv });
  homes.push(h);
  if (config !== null) h.writeConfig(config);
  const r = await runFermix(["doctor", "--json"], h.env);
  const parsed = JSON.parse(r.stdout) as { ok: boolean; rows: Row[] };
  const byCheck = (check: string) => parsed.rows.filter((row) => row.check === check);
  return { ...r, ...parsed, byCheck, home: h };
}

describe("fermix doctor", () => {
  test("a healthy config passes every row and exits 0", async () => {
    const r = await doctor(READY_CONFIG);
    expect(r.exitCode).toBe(0);
    expect(r.ok).toBe(true);
    const checks = r.rows.map((row) => row.check);
    expect(checks).toEqual([
      "config",
      "home",
      "secrets",
      "database",
      "provider openai",
      "channel telegram",
      "channel whatsapp",
      "channel slack",
      "channel discord",
      "channel signal",
      "channel acp",
      "transcription",
      "realtime",
      "scheduler",
      "jobs",
      "memory",
      "web fetch",
      "web search",
      "computer use",
      "sandbox",
      "user",
      "port",
      "service",
    ]);
    expect(r.rows.filter((row) => row.status === "fail")).toEqual([]);
    expect(r.byCheck("computer use")).toEqual([{ check: "computer use", status: "ok", detail: "disabled" }]);
    expect(r.stdout).not.toContain("sk-test-not-a-real-key");
  });

  test("computer use: what a virtual desktop needs and is missing fails, naming it; a host display without DISPLAY fails, saying why", async () => {
    const on = `${READY_CONFIG}\n[fermix_core.computer]\nenabled = true\nstart = ["xterm", "no-such-browser"]\n`;
    const found = await doctor(on);
    expect(found.byCheck("computer use")).toEqual([
      { check: "computer use", status: "ok", detail: "virtual display 1280×800; found Xvfb, xauth, xprop, xdotool, import" },
      { check: "computer use", status: "warn", detail: "start programs not installed, skipped: no-such-browser" },
    ]);
    // A PATH with none of the X tools (bun's own folder alone).
    const bare = await doctor(on, { PATH: "/nonexistent" });
    expect(bare.exitCode).toBe(1);
    expect(bare.byCheck("computer use")[0]).toEqual({
      check: "computer use",
      status: "fail",
      detail: expect.stringContaining("missing Xvfb, xauth, xprop, xdotool, import (Debian/Ubuntu: sudo apt-get install xvfb"),
    });
    const host = await doctor(`${READY_CONFIG}\n[fermix_core.computer]\nenabled = true\ndisplay = "host"\n`);
    expect(host.byCheck("computer use")).toEqual([
      { check: "computer use", status: "fail", detail: 'display = "host": no X display to drive: DISPLAY is not set in the daemon\'s environment' },
    ]);
  });

  test("the scheduler's time zone, the pending jobs (overdue ones warned about) and the memory store", async () => {
    const fresh = await doctor(`${READY_CONFIG}\n[fermix_core]\ntimezone = "Europe/Paris"\n`);
    expect(fresh.byCheck("scheduler")).toEqual([{ check: "scheduler", status: "ok", detail: "runs inside `fermix run`; times in Europe/Paris" }]);
    expect(fresh.byCheck("jobs")).toEqual([{ check: "jobs", status: "ok", detail: "none scheduled yet" }]);
    expect(fresh.byCheck("memory")).toEqual([{ check: "memory", status: "ok", detail: "on; nothing remembered yet" }]);

    // A database with two jobs (one of them overdue) and a remembered fact.
    const h = fresh.home;
    const db = openDatabase(join(h.home, "fermix.db"));
    const jobs = new JobStore(db);
    const origin = { channel: "telegram", conversation: "telegram:1:", senderId: "1", role: "operator" } as const;
    jobs.create({
      request: "late one",
      schedule: null,
      timezone: "Europe/Paris",
      dueAt: Date.now() - 3_600_000,
      origin,
      target: { channel: "telegram", chatId: "1" },
    });
    jobs.create({
      request: "daily",
      schedule: "0 9 * * *",
      timezone: "Europe/Paris",
      dueAt: Date.UTC(2099, 0, 1, 8),
      origin,
      target: { channel: "telegram", chatId: "1" },
    });
    new MemoryStore(db).add("owner", "Likes tea", "telegram:1:");
    db.close();
    const r = await runFermix(["doctor", "--json"], h.env);
    const rows = (JSON.parse(r.stdout) as { rows: Row[] }).rows;
    const jobsRow = rows.find((row) => row.check === "jobs")!;
    expect(jobsRow.status).toBe("warn");
    expect(jobsRow.detail).toMatch(
      /^2 pending \(1 repeating\); next due .+ \(Europe\/Paris\); 1 overdue: they run \(once, marked late\) when `fermix run` is running$/,
    );
    expect(rows.find((row) => row.check === "memory")!.detail).toBe("on; 1 fact remembered; up to 5 relevant facts (2000 characters) in each turn");
    expect(r.exitCode).toBe(0);
  });

  test("an unknown time zone stops the config, naming the key and what is allowed", async () => {
    const r = await doctor(`${READY_CONFIG}\n[fermix_core]\ntimezone = "Mars/Olympus"\n`);
    expect(r.exitCode).toBe(1);
    expect(r.byCheck("config")[0]!.detail).toContain(
      'fermix_core.timezone = "Mars/Olympus" is not valid: expected an IANA time zone name such as Europe/Paris or UTC',
    );
  });

  test("a fresh home fails: no config, no provider", async () => {
    const r = await doctor(null);
    expect(r.exitCode).toBe(1);
    expect(r.byCheck("config")[0]).toMatchObject({ status: "fail" });
    expect(r.byCheck("config")[0]!.detail).toContain("fermix setup");
    expect(r.byCheck("providers")[0]).toMatchObject({ status: "fail", detail: "no provider configured: run `fermix setup`" });
  });

  test("an invalid config fails its row with the load error", async () => {
    const r = await doctor(`[fermix_channels.slack]\nstreaming = "loud"\n`);
    expect(r.exitCode).toBe(1);
    expect(r.byCheck("config")[0]!.detail).toContain('fermix_channels.slack.streaming = "loud" is not valid: expected one of "off", "draft", "block"');
  });

  test("unknown keys are listed as warnings, which do not fail", async () => {
    const r = await doctor(`${READY_CONFIG}\n[fermix_core.compaction]\nthreshhold = 0.5\n`);
    expect(r.exitCode).toBe(0);
    expect(r.byCheck("config")[1]).toEqual({
      check: "config",
      status: "warn",
      detail: "unknown config key fermix_core.compaction.threshhold (did you mean fermix_core.compaction.threshold?)",
    });
  });

  test("a provider without its key fails, naming the variable that would supply it", async () => {
    const r = await doctor(READY_CONFIG.replace('api_key = "sk-test-not-a-real-key-000000"', ""));
    expect(r.exitCode).toBe(1);
    expect(r.byCheck("provider openai")[0]).toMatchObject({ status: "fail" });
    expect(r.byCheck("provider openai")[0]!.detail).toContain("OPENAI_API_KEY");
    const fromEnv = await doctor(READY_CONFIG.replace('api_key = "sk-test-not-a-real-key-000000"', ""), { OPENAI_API_KEY: "sk-env-0000000" });
    expect(fromEnv.exitCode).toBe(0);
  });

  test("an enabled channel without credentials, or without an owner/allowlist, fails", async () => {
    const missing = await doctor(`${READY_CONFIG}\n[fermix_channels.slack]\nenabled = true\nbot_token = "xoxb-1"\n`);
    expect(missing.exitCode).toBe(1);
    expect(missing.byCheck("channel slack")[0]).toEqual({ check: "channel slack", status: "fail", detail: "enabled but missing signing_secret" });
    const noOwner = await doctor(`${READY_CONFIG}\n[fermix_channels.slack]\nenabled = true\nbot_token = "xoxb-1"\nsigning_secret = "s3cret"\n`);
    expect(noOwner.exitCode).toBe(1);
    expect(noOwner.byCheck("channel slack")[0]!.detail).toContain("refused: no owner_user_id and no allowed_user_ids");
    const ok = await doctor(
      `${READY_CONFIG}\n[fermix_channels.slack]\nenabled = true\nbot_token = "xoxb-1"\nsigning_secret = "s3cret"\nowner_user_id = "U1"\n`,
    );
    expect(ok.byCheck("channel slack")[0]!.status).toBe("ok");
    expect(ok.exitCode).toBe(0);
  });

  test("a home readable by others fails", async () => {
    const h = makeHome({ PORT: await freePort() });
    homes.push(h);
    h.writeConfig(READY_CONFIG);
    chmodSync(h.home, 0o755);
    const r = await runFermix(["doctor", "--json"], h.env);
    expect(r.exitCode).toBe(1);
    const row = (JSON.parse(r.stdout) as { rows: Row[] }).rows.find((x) => x.check === "home")!;
    expect(row.status).toBe("fail");
    expect(row.detail).toContain("readable by other users");
  });

  test("a missing transcription key is a warning, not a failure, naming the backend and where a key would come from", async () => {
    const r = await doctor(`${READY_CONFIG}\n[fermix_core.transcription]\nbackend = "xai"\n`);
    expect(r.exitCode).toBe(0);
    expect(r.byCheck("transcription")).toEqual([
      {
        check: "transcription",
        status: "warn",
        detail:
          "xai (modelless) via https://api.x.ai/v1 has no api key: voice notes will be refused with a reply (run `fermix setup`, or set [fermix_core.transcription] api_key or XAI_API_KEY)",
      },
    ]);
  });

  test("the transcription row names the backend and where its key comes from, without showing it", async () => {
    const keyed = await doctor(`${READY_CONFIG}\n[fermix_core.transcription]\nbackend = "deepgram"\napi_key = "dg-key-123456"\n`);
    expect(keyed.byCheck("transcription")).toEqual([
      { check: "transcription", status: "ok", detail: "deepgram (nova-3) via https://api.deepgram.com/v1: api key set" },
    ]);
    // The provider named openai lends its key to the openai backend on the same server.
    const borrowed = await doctor(READY_CONFIG);
    expect(borrowed.byCheck("transcription")).toEqual([
      { check: "transcription", status: "ok", detail: "openai (gpt-4o-mini-transcribe) via https://api.openai.com/v1: api key of the openai provider" },
    ]);
    // …but never to another server.
    const elsewhere = await doctor(`${READY_CONFIG}\n[fermix_core.transcription]\nbase_url = "https://stt.example.com/v1"\n`);
    expect(elsewhere.byCheck("transcription")[0]!.status).toBe("warn");
    const fromEnv = await doctor(`${READY_CONFIG}\n[fermix_core.transcription]\nbackend = "deepgram"\n`, { DEEPGRAM_API_KEY: "dg-env-key-0000" });
    expect(fromEnv.byCheck("transcription")[0]!.detail).toBe("deepgram (nova-3) via https://api.deepgram.com/v1: api key set");
    expect(fromEnv.stdout).not.toContain("dg-env-key-0000");
  });

  test("an explicit draft streaming on a channel that cannot edit is reported (a warning: it still works, without streaming)", async () => {
    const wa = `${READY_CONFIG}\n[fermix_channels.whatsapp]\nenabled = true\naccess_token = "a-token"\nphone_number_id = "1"\nverify_token = "v-token"\napp_secret = "s-secret"\nowner_user_id = "1555"\nstreaming = "draft"\n`;
    const r = await doctor(wa);
    expect(r.exitCode).toBe(0);
    expect(r.byCheck("channel whatsapp streaming")).toEqual([
      {
        check: "channel whatsapp streaming",
        status: "warn",
        detail: 'streaming = "draft" but whatsapp cannot edit messages: replies will not stream at all (use "block", or remove the key)',
      },
    ]);
    const fine = await doctor(wa.replace('streaming = "draft"', 'streaming = "block"'));
    expect(fine.byCheck("channel whatsapp streaming")).toEqual([]);
  });

  test("run as root, doctor warns (a warning, not a failure) that commands are mapped to an unprivileged user but the daemon is not", async () => {
    const r = await doctor(READY_CONFIG);
    expect(r.exitCode).toBe(0);
    const [user] = r.byCheck("user");
    if (process.getuid!() === 0) {
      expect(user).toEqual({
        check: "user",
        status: "warn",
        detail:
          "fermix runs as root: run_command's commands run as uid 1000 (sandbox) in the sandbox, but the daemon itself holds every right on this machine; run it as an ordinary user",
      });
    } else {
      expect(user).toEqual({
        check: "user",
        status: "ok",
        detail: `fermix runs as uid ${process.getuid!()}, not root: run_command's commands run as that user, in the sandbox`,
      });
    }
  });

  test("the port taken by another program fails", async () => {
    const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("not fermix") });
    try {
      const r = await doctor(READY_CONFIG, { PORT: String(holder.port) });
      expect(r.exitCode).toBe(1);
      expect(r.byCheck("port")[0]).toEqual({
        check: "port",
        status: "fail",
        detail: `127.0.0.1:${holder.port} is taken by another program: stop it or set PORT`,
      });
    } finally {
      holder.stop(true);
    }
  });

  test("without --json: one plain line per row (no colour when not a terminal) and a summary", async () => {
    const h = makeHome({ PORT: await freePort() });
    homes.push(h);
    h.writeConfig(READY_CONFIG);
    mkdirSync(h.home, { recursive: true });
    const r = await runFermix(["doctor"], h.env);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain("\u001b[");
    expect(r.stdout).toMatch(/^ok {4}config +\S/m);
    expect(r.stdout).toMatch(/^ok {4}transcription +\S/m);
    // Run as root (as in CI), the user row warns, and the summary counts it.
    if (process.getuid!() === 0) {
      expect(r.stdout).toMatch(/^warn {2}user +fermix runs as root: /m);
      expect(r.stdout).toMatch(/^all checks passed \(1 warning\)$/m);
    } else {
      expect(r.stdout).toMatch(/^all checks passed$/m);
    }
  });
});
