/**
 * Who may ask the HTTP server what (src/http/access.ts): the Host judge on
 * its own, then every route of the whole app (`app.handle`, no port) as a
 * DNS-rebinding page, a name the owner allowed, and, with the server beyond
 * loopback, a caller with and without the dashboard token.
 */
import { describe, expect, test } from "bun:test";
import { buildHealthReport } from "../../src/daemon/health.ts";
import { gateFor, hostAllowed, routerReadsPath } from "../../src/http/access.ts";
import { type AppDeps, createApp } from "../../src/http/app.ts";
import type { DashboardSource } from "../../src/http/dashboard/index.ts";
import { SetupGate } from "../../src/http/setup/index.ts";
import { webhookRoutes } from "../../src/http/webhooks/index.ts";
import { ActivityLog } from "../../src/kernel/activity.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import { URL_VERIFICATION, USER } from "../channels/slack/fixtures.ts";
import { slackToml } from "../helpers/config.ts";
import { READY_CONFIG } from "../helpers/home.ts";
import { loadedFrom } from "../helpers/loaded.ts";
import { nowSeconds, signSlack } from "../helpers/sign.ts";

describe("hostAllowed: the Host names a page answers to", () => {
  const allowed = ["Fermix.Example", "nas"];
  test.each([
    ["127.0.0.1", true],
    ["127.0.0.1:4030", true],
    ["192.168.1.20:8080", true],
    ["[::1]:4030", true],
    ["[::1]", true],
    ["[2001:db8::7]:443", true],
    ["localhost", true],
    ["localhost:1", true],
    ["LOCALHOST:4030", true],
    ["localhost.", true],
    ["localhost.:4030", true],
    ["dashboard.localhost:4030", true],
    ["fermix.example", true],
    ["FERMIX.EXAMPLE:443", true],
    ["fermix.example.", true],
    ["nas", true],
    ["evil.example", false],
    ["evil.example:4030", false],
    ["127.0.0.1.nip.io", false],
    ["localhost.evil.example", false],
    ["fermix.example.evil.example", false],
    ["notlocalhost", false],
    ["::1", false],
    ["[not-an-ip]", false],
    ["fermix.example:port", false],
    ["fermix.example:4030:1", false],
    ["user@fermix.example", false],
    ["fermix.example, evil.example", false],
    ["", false],
    ["   ", false],
  ])("%p → %p", (host, expected) => {
    expect(hostAllowed(host, allowed)).toBe(expected);
  });

  test("a request with no Host at all is refused", () => {
    expect(hostAllowed(null, allowed)).toBe(false);
    expect(hostAllowed(undefined, allowed)).toBe(false);
  });

  test("a name is answered only while it is in the list", () => {
    expect(hostAllowed("fermix.example", [])).toBe(false);
    expect(hostAllowed("127.0.0.1", [])).toBe(true);
  });
});

test("gateFor: webhooks open, /health/live and /setup need the Host only, everything else the token too", () => {
  expect(["/webhook/slack", "/webhook/whatsapp"].map(gateFor)).toEqual(["open", "open"]);
  expect(["/health/live", "/setup", "/setup/x"].map(gateFor)).toEqual(["host", "host", "host"]);
  expect(["/", "/events", "/metrics", "/health", "/health/ready", "/health/live/", "/webhook", "/nope"].map(gateFor)).toEqual(Array(8).fill("token"));
});

test("routerReadsPath: false exactly where the router would read a path other than the URL's", () => {
  expect(routerReadsPath("http://127.0.0.1:4030/metrics")).toBe(true);
  expect(routerReadsPath("http://[::1]/metrics")).toBe(true);
  expect(routerReadsPath("http://nas/metrics")).toBe(false);
  expect(routerReadsPath("http://a/webhook/metrics")).toBe(false);
  expect(routerReadsPath("/webhook/aa/metrics")).toBe(false);
});

// The whole app, as the daemon builds it: health, setup, metrics, the dashboard and the webhook routes.
const quiet = new Logger({ write() {} }, "error", new Redactor());
const SLACK_SECRET = "slack-signing-secret-access";
const TOKEN = "start-token-0123456789abcdefghijklmnopqrstu";
const FIXED = "fixed-scraper-token-0001";
const METRICS = "# HELP fermix_up 1\nfermix_up 1\n";

const dashboard: DashboardSource = {
  async view() {
    const now = Date.now();
    return {
      now,
      health: report(),
      activity: new ActivityLog().snapshot(),
      totals: { channels: {}, turns: 0 },
      provider: null,
      queues: { runningTurns: 0, waitingMessages: 0, backgroundTasks: 0, outboxPending: 0 },
      jobs: { state: "running", pending: 0, active: 0, waiting: 0, nextDueAt: null },
      process: { version: "t", startedAt: now, rssBytes: 1, heapBytes: 1 },
    };
  },
  onChange: () => () => {},
};
const loaded = loadedFrom(READY_CONFIG + slackToml({ botToken: "xoxb-test", signingSecret: SLACK_SECRET, ownerUserId: USER }));
const report = () =>
  buildHealthReport({
    version: "t",
    now: new Date(),
    loaded,
    channels: new Map([["slack", { status: "ready", process_alive: true }]]),
    databaseReady: true,
    restartRequired: false,
  });

function appWith(access: AppDeps["access"]) {
  const gate = new SetupGate();
  const app = createApp({
    access,
    report,
    setupGate: gate,
    dashboard,
    metrics: { contentType: "text/plain; version=0.0.4", text: async () => METRICS },
    log: quiet,
    mounts: [webhookRoutes({ config: () => loaded.config, submit: async () => {}, log: quiet })],
  });
  /** `method path` sent to the app with these headers (Host among them), its body read so no stream stays open. */
  const send = async (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) => {
    const abort = new AbortController();
    const res = await app.handle(new Request(`http://fermix.test${path}`, { headers, signal: abort.signal, ...init }));
    // /events never ends by itself: its first bytes are enough.
    const body = path === "/events" && res.status === 200 ? "" : await res.text();
    abort.abort();
    return { status: res.status, headers: res.headers, body };
  };
  return { app, gate, send };
}

const PAGES = ["/", "/events", "/metrics", "/health", "/health/ready", "/health/live", "/setup"];

/** A Slack url_verification, signed now: what Slack sends when the webhook URL is registered. */
function signedSlack(): { method: string; body: string; headers: Record<string, string> } {
  const body = JSON.stringify(URL_VERIFICATION);
  return { method: "POST", body, headers: { "content-type": "application/json", ...signSlack(body, SLACK_SECRET, nowSeconds()) } };
}

describe("the Host check, on every route", () => {
  const hosts: string[] = [];
  const { send } = appWith({ allowedHosts: () => hosts });

  test("a rebinding page's name gets 421 naming the config key on every page, probe and /metrics", async () => {
    for (const path of PAGES) {
      const res = await send(path, { host: "evil.example:4030" });
      expect({ path, status: res.status }).toEqual({ path, status: 421 });
      expect(res.headers.get("content-type")).toStartWith("application/json");
      expect(JSON.parse(res.body)).toEqual({ error: "Misdirected Request", hint: expect.stringContaining("[fermix_core.http] allowed_hosts") });
    }
    // Nothing of the daemon's in the refusal: no metric, no report, no page.
    const metrics = await send("/metrics", { host: "evil.example" });
    expect(metrics.body).not.toContain("fermix_up");
  });

  test("an IP address, [::1] and localhost get the pages", async () => {
    for (const host of ["127.0.0.1:4030", "[::1]:4030", "localhost:4030", "10.0.0.5"]) {
      expect((await send("/", { host })).status).toBe(200);
      expect((await send("/metrics", { host })).body).toBe(METRICS);
      expect((await send("/health/ready", { host })).status).toBe(200);
      expect((await send("/events", { host })).status).toBe(200);
    }
  });

  test("a name in allowed_hosts is answered as soon as the list has it (read per request), in any case", async () => {
    expect((await send("/metrics", { host: "fermix.example" })).status).toBe(421);
    hosts.push("fermix.example");
    expect((await send("/metrics", { host: "FERMIX.example:443" })).status).toBe(200);
    expect((await send("/setup", { host: "fermix.example" })).status).toBe(403);
    hosts.length = 0;
    expect((await send("/metrics", { host: "fermix.example" })).status).toBe(421);
  });

  test("a signed webhook is answered under any Host", async () => {
    const init = signedSlack();
    const res = await send("/webhook/slack", { ...init.headers, host: "evil.example" }, { method: init.method, body: init.body });
    expect(res.status).toBe(200);
    expect(res.body).toBe(URL_VERIFICATION.challenge);
  });

  test("a URL whose path the router would read differently is refused, not judged by one path and served by another", async () => {
    const { app } = appWith({ allowedHosts: () => [] });
    // The router would read "/metrics" out of this URL while the URL's path is under /webhook/.
    const res = await app.handle(new Request("http://a/webhook/metrics", { headers: { host: "a" } }));
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain("fermix_up");
  });
});

describe("the dashboard token, beyond loopback", () => {
  let fixed: string | undefined;
  const { send, gate } = appWith({ allowedHosts: () => [], dashboardTokens: () => [TOKEN, ...(fixed ? [fixed] : [])] });
  const local = { host: "127.0.0.1:4030" };

  test("without it: 401 on the page, /events, /metrics and the health report; /health/live stays open", async () => {
    for (const path of ["/", "/events", "/metrics", "/health", "/health/ready"]) {
      const res = await send(path, local);
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="fermix"');
      expect(res.body).not.toContain("fermix_up");
    }
    expect((await send("/health/live", local)).status).toBe(200);
  });

  test("the Host check still comes first: a rebinding name is 421 even with the token", async () => {
    expect((await send("/metrics", { host: "evil.example", authorization: `Bearer ${TOKEN}` })).status).toBe(421);
  });

  test("Authorization: Bearer opens /metrics and the rest; a wrong token does not", async () => {
    const metrics = await send("/metrics", { ...local, authorization: `Bearer ${TOKEN}` });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toBe(METRICS);
    for (const path of ["/", "/events", "/health/ready"]) expect((await send(path, { ...local, authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN, "Bearer "]) {
      expect((await send("/metrics", { ...local, authorization: wrong })).status).toBe(401);
    }
  });

  test("the link sets an HttpOnly, SameSite=Strict cookie and sends the browser to / without the token; the cookie then opens the pages", async () => {
    const link = await send(`/?token=${TOKEN}`, local);
    expect(link.status).toBe(303);
    expect(link.headers.get("location")).toBe("/");
    const setCookie = link.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^fermix_dashboard=[^;]+; HttpOnly; SameSite=Strict; Path=\//);
    // The cookie is not the token itself.
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(";")[0]!;
    for (const path of ["/", "/events", "/metrics", "/health/ready"]) expect((await send(path, { ...local, cookie })).status).toBe(200);
    expect((await send("/metrics", { ...local, cookie: "fermix_dashboard=forged" })).status).toBe(401);
    // Over an HTTPS proxy, the cookie is Secure; other query parameters survive the redirect.
    const proxied = await send(`/health/ready?pretty=1&token=${TOKEN}`, { ...local, "x-forwarded-proto": "https" });
    expect(proxied.headers.get("location")).toBe("/health/ready?pretty=1");
    expect(proxied.headers.get("set-cookie")).toContain("; Secure");
  });

  test("a wrong token in the link is 401 and sets nothing", async () => {
    const res = await send("/?token=not-the-token", local);
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  test("a configured dashboard_token opens the pages too, from the moment the config has it", async () => {
    expect((await send("/metrics", { ...local, authorization: `Bearer ${FIXED}` })).status).toBe(401);
    fixed = FIXED;
    expect((await send("/metrics", { ...local, authorization: `Bearer ${FIXED}` })).status).toBe(200);
    expect((await send("/metrics", { ...local, authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    fixed = undefined;
  });

  test("/setup keeps its own gate: no dashboard token asked, its one-time link still needed", async () => {
    expect((await send("/setup", local)).status).toBe(403);
    const opened = await send(`/setup?t=${gate.issueToken()}`, local);
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe("/setup");
  });

  test("a signed webhook needs no token", async () => {
    const init = signedSlack();
    expect((await send("/webhook/slack", { ...init.headers, host: "hooks.example" }, { method: init.method, body: init.body })).status).toBe(200);
  });
});

test("on loopback no token is asked: the pages answer an allowed Host as they are", async () => {
  const { send } = appWith({ allowedHosts: () => [] });
  expect((await send("/metrics", { host: "127.0.0.1" })).status).toBe(200);
  expect((await send(`/?token=${TOKEN}`, { host: "127.0.0.1" })).status).toBe(200);
});
