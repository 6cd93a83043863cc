import { describe, expect, test } from "bun:test";
import { buildHealthReport } from "../../src/daemon/health.ts";
import { dashboardRoutes, type DashboardSource, type DashboardView } from "../../src/http/dashboard/index.ts";
import { explainFailure } from "../../src/http/dashboard/remedies.ts";
import { renderLive } from "../../src/http/dashboard/render.ts";
import { ActivityLog } from "../../src/kernel/activity.ts";
import type { HealthReport } from "../../src/kernel/health.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const TELEGRAM_ON = `
[fermix_core.providers.openai]
model = "gpt-5.1"
api_key = "sk-test-not-a-real-key-000000"

[fermix_channels.telegram]
bot_token = "123:abc"
owner_user_id = "42"

[fermix_channels.acp]
enabled = false
`;

function view(health: HealthReport, activity = new ActivityLog()): DashboardView {
  const now = Date.now();
  return {
    now,
    health,
    activity: activity.snapshot(),
    totals: { channels: {}, turns: 0 },
    provider: { name: "openai", model: "gpt-5.1", api: "responses" },
    queues: { runningTurns: 0, waitingMessages: 0, backgroundTasks: 0, outboxPending: 0 },
    jobs: { state: "running", pending: 0, active: 0, waiting: 0, nextDueAt: null },
    process: { version: "1.2.3", startedAt: now - 3_600_000, rssBytes: 64 * 2 ** 20, heapBytes: 8 * 2 ** 20 },
  };
}

const report = (toml: string | null, detail?: string) =>
  buildHealthReport({
    version: "1.2.3",
    now: new Date(),
    loaded: loadedFrom(toml),
    channels: new Map([["telegram", detail ? { status: "degraded", process_alive: true, detail } : { status: "ready", process_alive: true }]]),
    databaseReady: true,
    restartRequired: false,
  });

describe("what the health report's failures mean, and what fixes them", () => {
  test.each([
    ["no config.toml: run fermix setup", /no configuration yet/, "fermix setup --web"],
    ["no provider configured", /No model provider/, "fermix setup --web"],
    ["provider openai: no api_key", /“openai” has no API key/, "fermix_core.providers.openai.api_key"],
    ["provider openai: degraded: HTTP 401", /failing: HTTP 401/, "fermix_core.providers.openai.api_key"],
    ["channel slack: missing bot_token, signing_secret", /Slack is turned on but bot_token and signing_secret are not set/, "fermix_channels.slack.signing_secret"],
    ["channel discord: refused: no owner_user_id and no allowed_user_ids: nobody may talk to it", /not served/, "fermix_channels.discord.owner_user_id"],
    ["channel telegram: failed: bot token rejected by Telegram (401); fix bot_token and restart", /refused the bot token/, "fermix_channels.telegram.bot_token"],
    ["channel slack: degraded: sends failing for 2 min (http 500); retrying", /Replies wait in the outbox/, "fermix doctor"],
    ["memory store: disk I/O error", /Long-term memory/, "fermix doctor"],
  ])("%s", (line, words, fix) => {
    const explained = explainFailure(line);
    expect(explained.words).toMatch(words);
    expect(explained.fixes.map((f) => f.text)).toContain(fix);
  });
});

describe("the rendered page", () => {
  test("a ready daemon: a card per enabled channel, the provider, no attention box", () => {
    const html = String(renderLive(view(report(TELEGRAM_ON))));
    expect(html).toContain('data-status="ready"');
    expect(html).toContain('data-channel="telegram"');
    expect(html).not.toContain('data-channel="whatsapp"');
    expect(html).toContain("Off: WhatsApp, Slack, Discord, Signal");
    expect(html).not.toContain("What needs attention");
    expect(html).toContain("gpt-5.1");
    expect(html).toContain("up 1 h 0 min");
  });

  test("the Work card shows the scheduler, the jobs pending (running, waiting for a slot) and when the next is due", () => {
    const due = Date.UTC(2030, 4, 17, 9, 30);
    const busy = view(report(TELEGRAM_ON));
    busy.jobs = { state: "running", pending: 3, active: 1, waiting: 2, nextDueAt: due };
    const html = String(renderLive(busy));
    expect(html).toContain("<dt>Scheduler</dt><dd>running</dd>");
    expect(html).toContain("<dt>Jobs pending</dt><dd>3 (1 running) (2 waiting for a slot)</dd>");
    expect(html).toContain(`<dt>Next job</dt><dd><time>${new Date(due).toLocaleString("en-GB")}</time></dd>`);
    expect(html).toContain("17/05/2030");

    const idle = view(report(TELEGRAM_ON));
    idle.jobs = { state: "stopped", pending: 0, active: 0, waiting: 0, nextDueAt: null };
    const quiet = String(renderLive(idle));
    expect(quiet).toContain("<dt>Scheduler</dt><dd>stopped</dd>");
    expect(quiet).toContain("<dt>Jobs pending</dt><dd>0</dd>");
    expect(quiet).toContain('<dt>Next job</dt><dd><span class="muted">none</span></dd>');
  });

  test("a failure's text is shown as text, never as markup", () => {
    const html = String(renderLive(view(report(TELEGRAM_ON, '<img src=x onerror="alert(1)">'))));
    expect(html).toContain("What needs attention");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).not.toContain("<img");
  });

  test("setup required: says so, and points at the setup page", () => {
    const html = String(renderLive(view(report(null))));
    expect(html).toContain('data-status="setup_required"');
    expect(html).toContain("fermix setup --web");
  });
});

describe("routes", () => {
  function source(initial: HealthReport) {
    let health = initial;
    const listeners = new Set<() => void>();
    const src: DashboardSource = {
      view: async () => view(health),
      onChange(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    return {
      src,
      listeners,
      change(next: HealthReport) {
        health = next;
        for (const l of listeners) l();
      },
    };
  }

  test("GET / is the page, with its style and script pinned by hash and nothing loaded from elsewhere", async () => {
    const app = dashboardRoutes(source(report(TELEGRAM_ON)).src);
    const res = await app.handle(new Request("http://fermix.test/"));
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    const html = await res.text();
    expect(html).toContain('<main id="live">');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  test("GET /events sends the live part at once and again when something changes; it stops when the client goes", async () => {
    const s = source(report(TELEGRAM_ON));
    const app = dashboardRoutes(s.src, { refreshMs: 60_000, debounceMs: 10 });
    const abort = new AbortController();
    const res = await app.handle(new Request("http://fermix.test/events", { signal: abort.signal }));
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (done: () => boolean) => {
      while (!done()) text += decoder.decode((await reader.read()).value);
    };
    await readUntil(() => text.includes('data-status="ready"'));
    expect(text).toStartWith("retry: 2000\n\nevent: dashboard\ndata: ");
    s.change(report(TELEGRAM_ON, "polling failed: 502; reconnecting"));
    await readUntil(() => text.includes("polling failed"));
    expect(text.split("event: dashboard").length - 1).toBe(2);
    expect(s.listeners.size).toBe(1);
    abort.abort();
    await reader.cancel();
    await Bun.sleep(20);
    expect(s.listeners.size).toBe(0);
  });
});
