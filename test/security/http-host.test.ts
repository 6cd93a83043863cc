/**
 * The HTTP server from outside, against the compiled daemon: a DNS-rebinding
 * page (any Host that is not an IP address, localhost or a name the owner
 * allowed) reads nothing, while signed webhooks answer under any name; and a
 * daemon bound beyond loopback says so at start and in `fermix doctor`, and
 * keeps its pages, /events and /metrics behind the dashboard token it prints.
 *
 * Bun's fetch sends the Host header a test sets (the connection still goes
 * to the URL's address), so each request here names its own Host.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { URL_VERIFICATION, USER } from "../channels/slack/fixtures.ts";
import { type RunningDaemon, runFermix, stdoutSoFar } from "../helpers/binary.ts";
import { ACP_OFF, OPENAI_TEST, providerToml, slackToml, TELEGRAM_OFF, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import { nowSeconds, signSlack } from "../helpers/sign.ts";

const start = e2eResources();
const SECRET = "slack-signing-secret-host-check";
const PAGES = ["/", "/events", "/metrics", "/health", "/health/ready", "/health/live", "/setup"];

/** A home whose daemon serves Slack's webhook (replies to the Slack fake), with `extra` TOML appended. */
async function configured(env: Record<string, string> = {}, extra = "") {
  const model = await start.model();
  const slack = start.slack();
  const home = start.home(env);
  home.writeConfig(
    providerToml(model.url, OPENAI_TEST) +
      TELEGRAM_OFF +
      ACP_OFF +
      slackToml({ botToken: slack.token, signingSecret: SECRET, ownerUserId: USER, apiUrl: slack.apiUrl }) +
      extra,
  );
  return home;
}

/** The daemon's address on 127.0.0.1 (a wildcard bind is reached there). */
const local = (d: RunningDaemon, path: string) => `http://127.0.0.1:${d.url.port}${path}`;

/** GET `path` with these headers; the body is read (for /events only its first bytes, then the stream is dropped). */
async function get(d: RunningDaemon, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: string }> {
  const abort = new AbortController();
  const res = await fetch(local(d, path), { headers, redirect: "manual", signal: abort.signal });
  let body = "";
  if (path === "/events" && res.status === 200) {
    const reader = res.body!.getReader();
    body = new TextDecoder().decode((await reader.read()).value);
  } else {
    body = await res.text();
  }
  abort.abort();
  return { status: res.status, headers: res.headers, body };
}

/** Slack's url_verification, signed now, sent with `host` as its Host header. */
function postSignedSlack(d: RunningDaemon, host: string): Promise<Response> {
  const body = JSON.stringify(URL_VERIFICATION);
  return fetch(local(d, "/webhook/slack"), {
    method: "POST",
    headers: { host, "content-type": "application/json", ...signSlack(body, SECRET, nowSeconds()) },
    body,
  });
}

/** The status and body of one raw HTTP request (for what fetch will not send: no Host at all). */
function raw(port: number, request: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (d) => (received += d.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => {
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      if (!status) return reject(new Error(`no status line; got ${JSON.stringify(received.slice(0, 100))}`));
      resolve({ status: Number(status[1]), body: received.slice(received.indexOf("\r\n\r\n") + 4) });
    });
    socket.write(request);
  });
}

test("Host: evil.example gets 421 on every page, probe and /metrics, and a signed webhook still gets 200; a Host-less request is refused too", async () => {
  const d = await start.daemon(await configured());
  for (const path of PAGES) {
    const res = await get(d, path, { host: "evil.example" });
    expect({ path, status: res.status }).toEqual({ path, status: 421 });
    expect(JSON.parse(res.body)).toMatchObject({ error: "Misdirected Request" });
    expect(res.body).toContain("[fermix_core.http] allowed_hosts");
  }
  // The same routes on the address itself, as a browser on this machine opens them.
  for (const path of ["/", "/metrics", "/health/ready", "/health/live"]) expect((await get(d, path, { host: `127.0.0.1:${d.url.port}` })).status).toBe(200);
  expect((await get(d, "/", { host: `localhost:${d.url.port}` })).status).toBe(200);

  const hook = await postSignedSlack(d, "evil.example");
  expect(hook.status).toBe(200);
  expect(await hook.text()).toBe(URL_VERIFICATION.challenge);

  // HTTP/1.0 may leave Host out: the pages answer only a named Host.
  const port = Number(d.url.port);
  const hostless = await raw(port, "GET /metrics HTTP/1.0\r\n\r\n");
  expect(hostless.status).toBe(421);
  expect(hostless.body).not.toContain("# HELP");
  // A path that only looks like a webhook's is judged by where it leads.
  const traversal = await raw(port, "GET /webhook/%2e%2e/metrics HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
  expect(traversal.status).toBe(421);
  // A one-letter Host once made the router read "/metrics" out of "/webhook/metrics" (a path the check lets through).
  const shifted = await raw(port, "GET /webhook/metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  expect(shifted.status).toBe(404);
  expect(shifted.body).not.toContain("# HELP");
}, 30_000);

test("a name in allowed_hosts gets the pages, in any case and on any port, and a reload that adds one applies without a restart", async () => {
  const home = await configured({}, tomlTable("fermix_core.http", { allowed_hosts: ["fermix.example"] }));
  const d = await start.daemon(home);
  for (const path of ["/", "/metrics", "/health/ready"]) expect((await get(d, path, { host: "Fermix.Example:8443" })).status).toBe(200);
  expect((await get(d, "/setup", { host: "fermix.example" })).status).toBe(403);
  expect((await get(d, "/metrics", { host: "assistant.example" })).status).toBe(421);

  home.writeConfig(
    (await Bun.file(`${home.home}/config.toml`).text()).replace(
      'allowed_hosts = ["fermix.example"]',
      'allowed_hosts = ["fermix.example", "assistant.example"]',
    ),
  );
  d.proc.kill("SIGHUP");
  await until("the reload", () => d.logs().includes('msg="config reloaded"'));
  expect((await get(d, "/metrics", { host: "assistant.example" })).status).toBe(200);
}, 30_000);

test("FERMIX_HTTP_BIND=0.0.0.0: a warning at start and in doctor; pages and /metrics need the printed token (cookie or Bearer), /health/live does not", async () => {
  const env = { FERMIX_HTTP_BIND: "0.0.0.0" };
  const fixed = "scraper-token-fixed-0123456789";
  const home = await configured(env);
  // A fixed token for scrapers, in the secret store like any credential.
  writeFileSync(`${home.home}/secrets.toml`, `[fermix_core.http]\ndashboard_token = "${fixed}"\n`, { mode: 0o600 });
  const d = await start.daemon(home);
  const logs = d.logs();
  expect(logs).toContain("HTTP server reachable beyond loopback: the status page, /events, /metrics and the health report need the dashboard token");
  expect(logs).toContain("bind=0.0.0.0");

  const printed = stdoutSoFar(d);
  const link = () => /http:\/\/127\.0\.0\.1:\d+\/\?token=([A-Za-z0-9_-]+)/.exec(printed());
  await until("the dashboard link on stdout", () => link() !== null);
  const [url, token] = link()!;

  const host = { host: `127.0.0.1:${d.url.port}` };
  for (const path of ["/", "/events", "/metrics", "/health/ready"]) {
    const res = await get(d, path, host);
    expect({ path, status: res.status }).toEqual({ path, status: 401 });
    expect(res.body).not.toContain("# HELP");
  }
  expect((await get(d, "/health/live", host)).status).toBe(200);
  // The setup page keeps its own one-time gate.
  expect((await get(d, "/setup", host)).status).toBe(403);

  // A scraper: the printed token or the fixed one as a Bearer token.
  for (const bearer of [token!, fixed]) {
    const metrics = await get(d, "/metrics", { ...host, authorization: `Bearer ${bearer}` });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain("fermix_messages_total");
  }
  expect((await get(d, "/metrics", { ...host, authorization: "Bearer not-the-token-at-all" })).status).toBe(401);

  // A browser: the link sets the cookie and leaves the token out of the address; the cookie opens the page and its stream.
  const opened = await fetch(url!, { redirect: "manual" });
  expect(opened.status).toBe(303);
  expect(opened.headers.get("location")).toBe("/");
  const cookie = opened.headers.get("set-cookie")!;
  expect(cookie).toContain("HttpOnly");
  expect(cookie).toContain("SameSite=Strict");
  const jar = { ...host, cookie: cookie.split(";")[0]! };
  const page = await get(d, "/", jar);
  expect(page.status).toBe(200);
  expect(page.body).toContain('<main id="live">');
  expect((await get(d, "/events", jar)).status).toBe(200);

  // Still a rebinding page reads nothing, token or not; the webhook answers.
  expect((await get(d, "/metrics", { host: "evil.example", authorization: `Bearer ${token}` })).status).toBe(421);
  expect((await postSignedSlack(d, "hooks.example")).status).toBe(200);

  // Neither token is ever in the log.
  expect(d.logs()).not.toContain(token!);
  expect(d.logs()).not.toContain(fixed);

  const doctor = await runFermix(["doctor", "--json"], home.env);
  const rows = (JSON.parse(doctor.stdout) as { rows: Array<{ check: string; status: string; detail: string }> }).rows;
  const bind = rows.find((row) => row.check === "http bind");
  expect(bind?.status).toBe("warn");
  expect(bind?.detail).toStartWith("0.0.0.0 reaches beyond this machine: the status page, /events, /metrics and the health report need the dashboard token");
  expect(doctor.stdout).not.toContain(fixed);
}, 30_000);

test("on loopback (the default) no token is asked, printed or warned about", async () => {
  const home = await configured();
  const d = await start.daemon(home);
  expect((await get(d, "/metrics", { host: `127.0.0.1:${d.url.port}` })).status).toBe(200);
  expect(await d.stop()).toBe(0);
  expect(d.logs()).not.toContain("beyond loopback");
  expect(await new Response(d.proc.stdout).text()).not.toContain("token=");
  const doctor = await runFermix(["doctor", "--json"], home.env);
  expect(doctor.stdout).not.toContain('"http bind"');
}, 30_000);
