import { describe, expect, test } from "bun:test";
import { buildHealthReport } from "../../src/daemon/health.ts";
import { createApp } from "../../src/http/app.ts";
import { SetupGate } from "../../src/http/setup/index.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import { READY_CONFIG } from "../helpers/home.ts";
import { loadedFrom } from "../helpers/loaded.ts";
import { rng } from "../helpers/rng.ts";

const quiet = new Logger({ write() {} }, "error", new Redactor());

function appFor(toml: string | null, gate = new SetupGate()) {
  const loaded = loadedFrom(toml);
  const report = () => buildHealthReport({ version: "t", now: new Date(), loaded, channels: new Map(), databaseReady: true, restartRequired: false });
  return createApp({ access: { allowedHosts: () => ["fermix.test"] }, report, setupGate: gate, log: quiet });
}

const get = (app: ReturnType<typeof appFor>, path: string, init?: RequestInit) => app.handle(new Request(`http://fermix.test${path}`, init));

describe("health routes", () => {
  test("/health/live is 200 whatever the config says", async () => {
    const res = await get(appFor(null), "/health/live");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "alive", app: "fermix" });
  });

  test("/health and /health/ready: 503 setup_required on a fresh home, 200 ready when configured", async () => {
    for (const path of ["/health", "/health/ready"]) {
      const fresh = await get(appFor(null), path);
      expect(fresh.status).toBe(503);
      expect(((await fresh.json()) as { status: string }).status).toBe("setup_required");
      const ready = await get(appFor(READY_CONFIG), path);
      expect(ready.status).toBe(200);
      expect(ready.headers.get("content-type")).toStartWith("application/json");
      expect(((await ready.json()) as { status: string }).status).toBe("ready");
    }
  });

  test("?pretty=1 indents the JSON on all three routes; without it the body is compact", async () => {
    const app = appFor(READY_CONFIG);
    for (const path of ["/health", "/health/ready", "/health/live"]) {
      const pretty = await (await get(app, `${path}?pretty=1`)).text();
      expect(pretty).toStartWith('{\n  "status": ');
      const compact = await (await get(app, path)).text();
      expect(compact).toStartWith('{"status":');
      expect(JSON.parse(pretty)).toMatchObject({ status: JSON.parse(compact).status });
    }
  });

  test("an unknown route is a JSON 404", async () => {
    const res = await get(appFor(null), "/nope");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Not Found" });
  });
});

test("without a setup service, /setup is still gated: 403 without a token", async () => {
  const res = await get(appFor(null), "/setup");
  expect(res.status).toBe(403);
  expect(await res.text()).toBe("setup authorization required\n");
});

test("fuzz: random methods, paths, headers and bodies never produce a 5xx", async () => {
  const app = appFor(READY_CONFIG);
  const r = rng(20261130);
  const methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"];
  const paths = ["/", "/health", "/health/live", "/health/ready", "/setup", "/webhook/x", "/%", "/health?pretty=%ZZ", "/..//", "/setup?t=%00"];
  for (let i = 0; i < 2000; i++) {
    const method = r.pick(methods);
    const path = r.next() < 0.5 ? r.pick(paths) : `/${r.string(r.int(0, 20), "abc/?=&%.")}`;
    const headers = new Headers();
    if (r.next() < 0.5) headers.set("content-type", r.pick(["application/json", "text/plain", "multipart/form-data", r.string(8, "abc/;=+")]));
    if (r.next() < 0.3) headers.set("cookie", `fermix_setup=${r.string(10, "abcXYZ019-_=;%")}`);
    const body = method === "GET" || method === "HEAD" ? undefined : r.bytes(r.int(0, 256));
    let res: Response;
    try {
      res = await app.handle(new Request(`http://fermix.test${path.startsWith("/") ? path : `/${path}`}`, { method, headers, body }));
    } catch (error) {
      // A URL the Request constructor itself refuses never reaches the server.
      if (error instanceof TypeError) continue;
      throw error;
    }
    expect(res.status).toBeLessThan(500);
  }
});
