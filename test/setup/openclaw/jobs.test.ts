/**
 * Cron jobs into Fermix jobs (src/setup/openclaw/jobs.ts): which schedules
 * translate and to what, where the result goes, and what is listed instead.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../../src/channels/registry.ts";
import { resolveConfig } from "../../../src/config/load.ts";
import type { ImportedChannel } from "../../../src/setup/openclaw/channels.ts";
import { type JobsInput, planJobs } from "../../../src/setup/openclaw/jobs.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");

const channel = (name: "telegram" | "slack"): ImportedChannel => ({
  name,
  title: profileOf(name).title,
  openclaw: profileOf(name).setup!.openclaw!,
  on: true,
});

const config = (file: Record<string, unknown>) => resolveConfig({ file, secrets: {}, env: {}, filePath: "config.toml" }).config;

const TELEGRAM_OWNED = config({ fermix_channels: { telegram: { enabled: true, owner_user_id: "111" }, slack: { enabled: true, owner_user_id: "U1" } } });

function run(jobs: unknown[], over: Partial<JobsInput> = {}) {
  return planJobs({ jobs, channels: [channel("telegram"), channel("slack")], config: TELEGRAM_OWNED, timezone: "UTC", now: NOW, live: [], ...over });
}

const job = (schedule: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: "j",
  name: "J",
  enabled: true,
  schedule,
  payload: { kind: "agentTurn", message: "Do it." },
  ...extra,
});

describe("schedules", () => {
  test("an interval that fits the clock becomes a cron schedule; its anchor picks the minute", () => {
    const anchor = Date.parse("2026-01-01T08:05:00Z");
    const cases: Array<[number, number | undefined, string]> = [
      [60_000, undefined, "* * * * *"],
      [15 * 60_000, undefined, "*/15 * * * *"],
      [15 * 60_000, anchor, "5-59/15 * * * *"],
      [3_600_000, anchor, "5 * * * *"],
      [6 * 3_600_000, anchor, "5 2-23/6 * * *"],
      [86_400_000, anchor, "5 8 * * *"],
      [7 * 86_400_000, anchor, "5 8 * * 4"],
    ];
    for (const [everyMs, anchorMs, expected] of cases) {
      const plan = run([job({ kind: "every", everyMs, ...(anchorMs ? { anchorMs } : {}) })]);
      expect(plan.jobs.map((j) => j.schedule)).toEqual([expected]);
    }
  });

  test("an interval no cron schedule matches, or under a minute, is listed", () => {
    expect(run([job({ kind: "every", everyMs: 90 * 60_000 })]).rows[0]!.detail).toContain("every 90 minutes, which no cron schedule on the clock matches");
    expect(run([job({ kind: "every", everyMs: 30_000 })]).rows[0]!.detail).toContain("at most once a minute");
  });

  test("a one-time job is UTC unless it says otherwise, and only while it is ahead", () => {
    expect(run([job({ kind: "at", at: "2026-07-01T09:00:00" })]).jobs[0]!.dueAt).toBe(Date.parse("2026-07-01T09:00:00Z"));
    expect(run([job({ kind: "at", at: "2026-07-01T09:00:00+02:00" })]).jobs[0]!.dueAt).toBe(Date.parse("2026-07-01T07:00:00Z"));
    expect(run([job({ kind: "at", at: "2026-05-01T09:00:00Z" })]).rows[0]!.detail).toContain("has passed");
  });

  test("a cron schedule keeps its zone, or takes the owner's; one croner cannot read is listed with why", () => {
    const [paris] = run([job({ kind: "cron", expr: "0 7 * * *", tz: "Europe/Paris" })]).jobs;
    expect([paris!.schedule, paris!.timezone]).toEqual(["0 7 * * *", "Europe/Paris"]);
    expect(run([job({ kind: "cron", expr: "0 7 * * *" })], { timezone: "Asia/Tokyo" }).jobs[0]!.timezone).toBe("Asia/Tokyo");
    expect(run([job({ kind: "cron", expr: "not a schedule" })]).jobs).toEqual([]);
  });
});

describe("targets", () => {
  test("a named chat on an imported channel; a Telegram topic becomes the thread", () => {
    const plan = run([job({ kind: "cron", expr: "0 7 * * *" }, { delivery: { mode: "announce", channel: "telegram", to: "-1001234567890:topic:99" } })]);
    expect(plan.jobs[0]!.target).toEqual({ channel: "telegram", chatId: "-1001234567890", threadId: "99" });
    expect(plan.jobs[0]!.origin).toEqual({ channel: "telegram", conversation: "telegram:-1001234567890:99", senderId: "111", role: "operator" });
  });

  test("no target, or `last`: the owner's own chat on the first channel where that chat is the owner's id", () => {
    const main = job({ kind: "cron", expr: "0 7 * * *" }, { payload: { kind: "systemEvent", text: "Stretch." } });
    expect(run([main]).jobs[0]!.target).toEqual({ channel: "telegram", chatId: "111" });
    const slackOnly = run([main], { channels: [channel("slack")] });
    expect(slackOnly.jobs).toEqual([]);
    expect(slackOnly.rows[0]!.detail).toContain("no imported channel has an owner's chat");
  });

  test("a channel that is off, a channel not imported, a direct message Slack cannot address, none and webhook deliveries are listed", () => {
    const off = config({ fermix_channels: { telegram: { enabled: false, owner_user_id: "111" } } });
    const cron = { kind: "cron", expr: "0 7 * * *" };
    expect(run([job(cron, { delivery: { channel: "telegram", to: "111" } })], { config: off }).rows[0]!.detail).toContain("off after the import");
    expect(run([job(cron, { delivery: { channel: "mattermost", to: "x" } })]).rows[0]!.detail).toContain("which this import does not bring");
    expect(run([job(cron, { delivery: { channel: "slack", to: "user:U1" } })]).rows[0]!.detail).toContain("direct message");
    expect(run([job(cron, { delivery: { mode: "none" } })]).rows[0]!.detail).toContain("delivers nowhere");
    expect(run([job(cron, { delivery: { mode: "webhook", to: "https://x" } })]).rows[0]!.detail).toContain("webhook");
  });
});
