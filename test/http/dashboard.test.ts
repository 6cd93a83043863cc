import { describe, expect, test } from "bun:test";
import { buildHealthReport } from "../../src/daemon/health.ts";
import { type DashboardSource, type DashboardView, dashboardRoutes } from "../../src/http/dashboard/index.ts";
import { explainFailure } from "../../src/http/dashboard/remedies.ts";
import { renderLive } from "../../src/http/dashboard/render.ts";
import { ActivityLog, type ChannelTally, type ChartBucket, emptyTally } from "../../src/kernel/activity.ts";
import type { HealthReport } from "../../src/kernel/health.ts";
import { loadedFrom } from "../helpers/loaded.ts";
import { until } from "../helpers/wait.ts";

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
    [
      "provider openai: the provider refused the key (HTTP 401); run `fermix doctor`",
      /failing: the provider refused the key \(HTTP 401\)/,
      "fermix_core.providers.openai.api_key",
    ],
    ["provider openai: server error (HTTP 500)", /“openai” is failing: server error \(HTTP 500\)\./, "fermix_core.providers.openai.base_url"],
    [
      "channel slack: missing bot_token, signing_secret",
      /Slack is turned on but bot_token and signing_secret are not set/,
      "fermix_channels.slack.signing_secret",
    ],
    ["channel discord: refused: no owner_user_id and no allowed_user_ids: nobody may talk to it", /not served/, "fermix_channels.discord.owner_user_id"],
    [
      "channel telegram: failed: bot token rejected by Telegram (HTTP 401); fix bot_token and restart",
      /refused the bot token/,
      "fermix_channels.telegram.bot_token",
    ],
    [
      "channel whatsapp: failed: start failed: WhatsApp did not accept the access token (HTTP 401)",
      /WhatsApp refused the access token/,
      "fermix_channels.whatsapp.access_token",
    ],
    ["channel slack: degraded: sends failing for 2 min: server error (HTTP 500); retrying", /Replies wait in the outbox/, "fermix doctor"],
    ["memory store: disk I/O error", /Long-term memory/, "fermix doctor"],
  ])("%s", (line, words, fix) => {
    const explained = explainFailure(line);
    expect(explained.words).toMatch(words);
    expect(explained.fixes.map((f) => f.text)).toContain(fix);
  });
});

describe("the rendered page", () => {
  test("the tool servers card: each MCP server's state and tool count, the failing one explained", () => {
    const shown = view(report(TELEGRAM_ON));
    shown.toolServers = [
      { name: "files", transport: "stdio", state: "ready", tools: 4 },
      { name: "calendar", transport: "http", state: "restarting", tools: 0, problem: "could not be reached" },
    ];
    const html = String(renderLive(shown));
    expect(html).toContain("Tool servers (MCP)");
    expect(html).toContain('data-mcp-server="files" data-state="ready"');
    expect(html).toContain("4 tools");
    expect(html).toContain('data-mcp-server="calendar" data-state="restarting"');
    expect(html).toContain("could not be reached");
    expect(String(renderLive(view(report(TELEGRAM_ON))))).not.toContain("Tool servers");
    expect(explainFailure("mcp server calendar: could not be reached; connecting again").words).toBe(
      "The tool server “calendar” is not available (could not be reached; connecting again); its tools are withdrawn meanwhile.",
    );
  });

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
    s.change(report(TELEGRAM_ON, "polling failed: server error (HTTP 502); reconnecting"));
    await readUntil(() => text.includes("polling failed"));
    expect(text.split("event: dashboard").length - 1).toBe(2);
    expect(s.listeners.size).toBe(1);
    abort.abort();
    await reader.cancel();
    await until("the closed stream to stop listening", () => s.listeners.size === 0);
  });
});

/** A moment in local time, so clock() reads the same in any time zone: 14:30:00. */
const NOW = new Date(2030, 4, 17, 14, 30, 0).getTime();
const MIN = 60_000;
const MB = 2 ** 20;

/** Every channel on, one per mode: Slack (webhooks), Discord (gateway), Signal (subprocess), ACP (socket); Telegram failed; WhatsApp on but unconfigured. */
const EVERY_MODE = `
[fermix_core.providers.openai]
model = "gpt-5.1"
api_key = "sk-test-not-a-real-key-000000"

[fermix_channels.telegram]
bot_token = "123:abc"
owner_user_id = "42"

[fermix_channels.whatsapp]
enabled = true

[fermix_channels.slack]
enabled = true
bot_token = "xoxb-1"
signing_secret = "s"
owner_user_id = "U1"

[fermix_channels.discord]
enabled = true
bot_token = "d"
owner_user_id = "1"

[fermix_channels.signal]
enabled = true
account = "+15550000000"
owner_user_id = "+15550000001"
`;

const TELEGRAM_REJECTED = "bot token rejected by Telegram (HTTP 401); fix bot_token and restart";

const everyMode = (restartRequired = false) =>
  buildHealthReport({
    version: "1.2.3",
    now: new Date(NOW),
    loaded: loadedFrom(EVERY_MODE),
    channels: new Map([
      ["telegram", { status: "failed", process_alive: false, detail: TELEGRAM_REJECTED }],
      ["slack", { status: "ready", process_alive: true }],
      ["discord", { status: "ready", process_alive: true }],
      ["signal", { status: "ready", process_alive: true }],
      ["acp", { status: "ready", process_alive: true }],
    ]),
    databaseReady: true,
    restartRequired,
  });

const tally = (t: Partial<ChannelTally>): ChannelTally => ({ ...emptyTally(), ...t });

/** The last hour's 60 minute buckets, oldest first, with counts in the minutes given (index → counts). */
function hour(active: Record<number, Partial<ChartBucket>>): ChartBucket[] {
  const first = Math.floor(NOW / MIN) * MIN - 59 * MIN;
  return Array.from({ length: 60 }, (_, i) => ({ at: first + i * MIN, turns: 0, inbound: 0, outbound: 0, ...active[i] }));
}

/** A busy daemon with a value in every field the page shows, each one different, so a value shown in the wrong place shows. */
function busyView(health: HealthReport): DashboardView {
  return {
    now: NOW,
    health,
    activity: {
      entries: [],
      chart: hour({ 10: { inbound: 1, turns: 1 }, 59: { inbound: 4, outbound: 3, turns: 2 } }),
      channels: {
        slack: tally({ readySince: NOW - 125 * MIN, lastInboundAt: NOW - 30_000, lastOutboundAt: NOW - 12 * MIN, todayInbound: 7, todayOutbound: 6 }),
        discord: tally({ readySince: NOW - 40 * MIN, lastInboundAt: NOW - 3 * MIN, lastOutboundAt: NOW - 2 * MIN, todayInbound: 13, todayOutbound: 12 }),
        signal: tally({ readySince: NOW - (2 * 24 * 60 + 4 * 60) * MIN }),
        acp: tally({ readySince: NOW - 20_000, lastInboundAt: NOW - 61 * MIN, lastOutboundAt: NOW - 61 * MIN, todayInbound: 2, todayOutbound: 1 }),
        telegram: tally({ readySince: NOW - 300 * MIN, lastInboundAt: NOW - 5 * MIN, todayInbound: 1, lastError: { at: NOW - MIN, detail: "failed: old" } }),
      },
      lastTurn: { at: NOW - 5 * MIN, channel: "discord", durationMs: 2340, inputTokens: 12_345, outputTokens: 678 },
    },
    totals: { channels: { slack: { inbound: 21, outbound: 20 }, discord: { inbound: 31, outbound: 30 } }, turns: 49 },
    provider: { name: "openai", model: "gpt-5.1", api: "responses" },
    queues: { runningTurns: 2, waitingMessages: 5, backgroundTasks: 3, outboxPending: 4 },
    jobs: { state: "running", pending: 0, active: 0, waiting: 0, nextDueAt: null },
    process: { version: "1.2.3-test", startedAt: NOW - (3 * 60 + 7) * MIN, rssBytes: 150 * MB, heapBytes: 42 * MB },
  };
}

/** What a person reads: the markup's text, tags as spaces, entities decoded, whitespace collapsed. */
const words = (markup: string) =>
  markup
    .replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

/** One card's markup, by its opening tag's attribute. */
function cardOf(page: string, attribute: string): string {
  const start = page.indexOf(attribute);
  expect(start).toBeGreaterThan(-1);
  return page.slice(page.lastIndexOf("<article", start), page.indexOf("</article>", start));
}

describe("each channel's card, in every mode and state", () => {
  const page = String(renderLive(busyView(everyMode())));
  const card = (name: string) => words(cardOf(page, `data-channel="${name}"`));

  test("webhooks (Slack): status, mode, connected since, last inbound and outbound, messages today and since start", () => {
    expect(page).toContain('<article class="card channel" data-channel="slack" data-status="ready">');
    expect(card("slack")).toBe(
      "Slack Ready Mode webhooks Connected 12:25:00 (2 h 5 min) Last inbound 14:29:30 (now) Last outbound 14:18:00 (12 min ago) Messages today 7 in · 6 out Since start 21 in · 20 out",
    );
  });

  test("gateway (Discord)", () => {
    expect(page).toContain('data-channel="discord" data-status="ready"');
    expect(card("discord")).toBe(
      "Discord Ready Mode gateway socket Connected 13:50:00 (40 min) Last inbound 14:27:00 (3 min ago) Last outbound 14:28:00 (2 min ago) Messages today 13 in · 12 out Since start 31 in · 30 out",
    );
  });

  test("degraded because its replies fail to send: still connected, since when, and why it is degraded", () => {
    const troubled = buildHealthReport({
      version: "1.2.3",
      now: new Date(NOW),
      loaded: loadedFrom(EVERY_MODE),
      channels: new Map([["slack", { status: "ready", process_alive: true }]]),
      databaseReady: true,
      restartRequired: false,
      sendTrouble: (channel) => (channel === "slack" ? "sends failing for 2 min: server error (HTTP 500); retrying" : undefined),
    });
    const degraded = String(renderLive(busyView(troubled)));
    expect(degraded).toContain('data-channel="slack" data-status="degraded"');
    const slack = words(cardOf(degraded, 'data-channel="slack"'));
    expect(slack).toStartWith("Slack Degraded Mode webhooks Connected 12:25:00 (2 h 5 min)");
    expect(slack).toContain("sends failing for 2 min: server error (HTTP 500)");
  });

  test("subprocess (Signal): up for days, and nothing received yet", () => {
    expect(card("signal")).toBe(
      "Signal Ready Mode signal-cli Connected 10:30:00 (2 d 4 h) Last inbound never Last outbound never Messages today 0 in · 0 out Since start 0 in · 0 out",
    );
  });

  test("socket (ACP)", () => {
    expect(card("acp")).toBe(
      "The editor socket (ACP) Ready Mode local socket Connected 14:29:40 (<1 min) Last inbound 13:29:00 (1 h 1 min ago) Last outbound 13:29:00 (1 h 1 min ago) Messages today 2 in · 1 out Since start 0 in · 0 out",
    );
  });

  test("failed (Telegram): not connected, why in plain words on its card, and the fix in the attention box", () => {
    expect(page).toContain('data-channel="telegram" data-status="failed"');
    const telegram = card("telegram");
    expect(telegram).toStartWith("Telegram Failed Mode long polling Connected not connected Last inbound 14:25:00 (5 min ago)");
    expect(telegram).toContain("Telegram refused the bot token: bot token rejected by Telegram (HTTP 401); fix bot_token and restart.");
    // The failure is said once: the older error behind it is not shown as well.
    expect(telegram).not.toContain("old");
    const attention = words(page.slice(page.indexOf('<section class="why'), page.indexOf("</section>", page.indexOf('<section class="why'))));
    expect(attention).toContain(
      "Telegram refused the bot token: bot token rejected by Telegram (HTTP 401); fix bot_token and restart. Fix: set fermix_channels.telegram.bot_token or run fermix setup --web",
    );
  });

  test("enabled but unconfigured (WhatsApp): a card saying so, and each missing key to set", () => {
    expect(page).toContain('data-channel="whatsapp" data-status="unconfigured"');
    const whatsapp = card("whatsapp");
    expect(whatsapp).toStartWith(
      "WhatsApp Not configured Mode webhooks Connected not connected Last inbound never Last outbound never Messages today 0 in · 0 out",
    );
    expect(whatsapp).toContain("WhatsApp is turned on but access_token, phone_number_id, verify_token, and app_secret are not set.");
    const attention = words(page.slice(page.indexOf('<section class="why')));
    expect(attention).toContain(
      "Fix: set fermix_channels.whatsapp.access_token or set fermix_channels.whatsapp.phone_number_id or set fermix_channels.whatsapp.verify_token or set fermix_channels.whatsapp.app_secret",
    );
    expect(page).not.toContain("Off:");
    expect(page).toContain('data-status="degraded"');
  });
});

describe("the rest of the page's numbers", () => {
  const page = String(renderLive(busyView(everyMode())));

  test("the header: version, uptime and memory", () => {
    expect(words(page.slice(page.indexOf('<p class="meta">'), page.indexOf("</p>", page.indexOf('<p class="meta">'))))).toBe(
      "v1.2.3-test up 3 h 7 min memory 150 MB (heap 42 MB)",
    );
  });

  test("the provider card: the last turn's latency, time and tokens, and the turns since start", () => {
    expect(words(cardOf(page, 'class="card provider"'))).toBe(
      "Model provider Ready Provider openai Model gpt-5.1 API responses Last turn 2.34 s at 14:25:00 Tokens 12,345 in · 678 out Turns since start 49",
    );
    const quick = busyView(everyMode());
    quick.activity.lastTurn = { at: NOW - 10_000, channel: "slack", durationMs: 850, inputTokens: 3, outputTokens: 1_000_000 };
    expect(words(cardOf(String(renderLive(quick)), 'class="card provider"'))).toContain("Last turn 850 ms at 14:29:50 Tokens 3 in · 1,000,000 out");
    const none = busyView(everyMode());
    none.activity.lastTurn = null;
    expect(words(cardOf(String(renderLive(none)), 'class="card provider"'))).toContain("Last turn none yet Tokens —");
  });

  test("the Desktop card: only with computer use on; idle, running or paused, since when, how many actions", () => {
    expect(page).not.toContain('class="card desktop"');
    const idle = busyView(everyMode());
    idle.desktop = { enabled: true, display: "virtual", session: null };
    expect(words(cardOf(String(renderLive(idle)), 'class="card desktop"'))).toBe("Desktop Idle Display virtual Started no session Actions 0 Last action —");
    const running = busyView(everyMode());
    const session = { state: "running" as const, display: ":93", startedAt: NOW - 12 * MIN, actions: 17, lastUsedAt: NOW - 2 * MIN };
    running.desktop = { enabled: true, display: "virtual", session };
    expect(words(cardOf(String(renderLive(running)), 'class="card desktop"'))).toBe(
      "Desktop Running Display :93 (virtual) Started 14:18:00 (12 min) Actions 17 Last action 14:28:00 (2 min ago)",
    );
    const paused = busyView(everyMode());
    paused.desktop = { enabled: true, display: "host", session: { ...session, state: "paused", display: ":0" } };
    expect(words(cardOf(String(renderLive(paused)), 'class="card desktop"'))).toBe(
      "Desktop Paused Display :0 (host) Started 14:18:00 (12 min) Actions 17 Last action 14:28:00 (2 min ago) Paused by the owner: /resume hands it back, /stop closes it.",
    );
  });

  test("with a fallback: each fallback provider with its own status, and which provider gave the last answer", () => {
    const toml = `${EVERY_MODE}
[fermix_core]
fallback = ["claude"]

[fermix_core.providers.claude]
api = "anthropic"
model = "claude-sonnet-4-5"
api_key = "sk-ant-test-not-a-real-key"
`.replace('[fermix_core.providers.openai]\nmodel = "gpt-5.1"', '[fermix_core.providers.openai]\nprimary = true\nmodel = "gpt-5.1"');
    const failing = buildHealthReport({
      version: "1.2.3",
      now: new Date(NOW),
      loaded: loadedFrom(toml),
      channels: new Map(),
      databaseReady: true,
      restartRequired: false,
      providers: new Map([
        ["openai", { status: "degraded", fault: { fault: "unreachable" } }],
        ["claude", { status: "ready" }],
      ]),
    });
    const standIn = busyView(failing);
    standIn.fallback = ["claude"];
    standIn.activity.lastTurn = { at: NOW - 10_000, channel: "slack", provider: "claude", durationMs: 850, inputTokens: 3, outputTokens: 4 };
    const card = words(cardOf(String(renderLive(standIn)), 'class="card provider"'));
    expect(card).toStartWith(
      "Model provider Degraded Provider openai Model gpt-5.1 API responses Fallback claude Ready Last turn 850 ms at 14:29:50 · answered by claude",
    );
    expect(failing.failures).toContain("provider openai: could not be reached");
  });

  test("the Work card: turns running, messages waiting, background tasks, replies unsent", () => {
    expect(words(cardOf(page, 'class="card queues"'))).toStartWith("Work 2 turns running 5 messages waiting 3 background tasks 4 replies unsent");
  });

  test("the chart: the legend's totals, and a bar in and out for each minute with messages, as tall as its count", () => {
    const chart = page.slice(page.indexOf('<div class="chart">'));
    expect(chart).toContain('aria-label="Last hour: 3 turns, 5 messages in, 3 out"');
    expect(words(chart.slice(chart.indexOf('<div class="legend">'), chart.indexOf("</div>", chart.indexOf('<div class="legend">'))))).toBe(
      "5 in 3 out 3 turns per minute, last 60 min · peak 4",
    );
    // 60 minutes across 600 units: the last minute's bars at x 591 and 595.2; 4 in is the peak (full height), 3 out three quarters of it.
    expect(chart).toContain('<rect class="k-in" x="591.0" y="8.0" width="3.8" height="112.0" rx="1"/>');
    expect(chart).toContain('<rect class="k-out" x="595.2" y="36.0" width="3.8" height="84.0" rx="1"/>');
    // Minute 10: one message in, none out.
    expect(chart).toContain('<rect class="k-in" x="101.0" y="92.0" width="3.8" height="28.0" rx="1"/>');
    expect(chart.match(/<rect class="k-in"/g)).toHaveLength(2);
    expect(chart.match(/<rect class="k-out"/g)).toHaveLength(1);
    // The turns line passes through 1 turn in minute 10 and 2 in the last.
    const points = /<polyline class="turnline" points="([^"]+)"/.exec(chart)![1]!.split(" ");
    expect(points).toHaveLength(60);
    expect(points[10]).toBe("105.0,92.0");
    expect(points[59]).toBe("595.0,64.0");
    expect(points[0]).toBe("5.0,120.0");
  });

  test("an idle hour: no bars, no line, zeros in the legend", () => {
    const idle = busyView(everyMode());
    idle.activity.chart = hour({});
    const chart = String(renderLive(idle)).split('<div class="chart">')[1]!;
    expect(chart).not.toContain("<rect");
    expect(chart).not.toContain("<polyline");
    expect(chart).toContain('aria-label="Last hour: 0 turns, 0 messages in, 0 out"');
    expect(words(chart)).toContain("0 in 0 out 0 turns per minute, last 60 min · peak 1");
  });
});

describe("a change that needs a restart", () => {
  test("health's restart_required? puts a notice on the page saying how to restart; without it there is none", () => {
    const flagged = String(renderLive(busyView(everyMode(true))));
    expect(words(flagged)).toContain(
      "Some configuration changes take effect only after a restart: restart fermix run , or fermix service install restarts the service.",
    );
    // It is shown above the failures, even when there are none.
    expect(flagged.indexOf("take effect only after a restart")).toBeLessThan(flagged.indexOf("What needs attention"));
    const calm = view(
      buildHealthReport({
        version: "1",
        now: new Date(),
        loaded: loadedFrom(TELEGRAM_ON),
        channels: new Map([["telegram", { status: "ready", process_alive: true }]]),
        databaseReady: true,
        restartRequired: true,
      }),
    );
    const ready = String(renderLive(calm));
    expect(ready).toContain('data-status="ready"');
    expect(ready).toContain('<div class="banner warn">Some configuration changes take effect only after a restart');
    expect(String(renderLive(busyView(everyMode())))).not.toContain("only after a restart");
  });
});
