/**
 * Refusal at start with the compiled binary: an enabled chat channel with
 * neither owner nor allowlist is logged as refused, reported failed in
 * health and doctor, and its webhook route stays up but denies every sender.
 */
import { afterEach, expect, test } from "bun:test";
import { reply, startFakeModel } from "../fakes/model-server.ts";
import { SLACK_ALICE, startSlackFake } from "../fakes/slack.ts";
import { runFermix, startDaemon, type RunningDaemon } from "../helpers/binary.ts";
import { until } from "../helpers/gateway.ts";
import { makeHome } from "../helpers/home.ts";
import { nowSeconds, signSlack } from "../helpers/sign.ts";

const SECRET = "trust-test-signing-secret-0000";
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

test("a Slack channel with no owner and no allowlist is refused at start, visible in health and doctor, and answers nobody", async () => {
  const model = await startFakeModel();
  cleanups.push(() => model.stop());
  model.fallback(reply.text("should never be asked"));
  const slack = startSlackFake();
  cleanups.push(() => slack.stop());
  const home = makeHome();
  cleanups.push(() => home.cleanup());
  home.writeConfig(`
[fermix_core.providers.fake]
api = "chat"
base_url = "${model.url}"
model = "fake-model"

[fermix_channels.telegram]
enabled = false
[fermix_channels.acp]
enabled = false

[fermix_channels.slack]
enabled = true
bot_token = "${slack.token}"
signing_secret = "${SECRET}"
api_url = "${slack.apiUrl}"
`);
  const d: RunningDaemon = await startDaemon(home.env);
  cleanups.push(async () => {
    if (d.proc.exitCode === null) await d.stop("SIGKILL");
  });
  expect(d.logs()).toMatch(/channel refused at start.*channel=slack.*reason="?no owner_user_id and no allowed_user_ids/);

  const health = await fetch(new URL("/health/ready", d.url));
  expect(health.status).toBe(503);
  const report = (await health.json()) as { status: string; failures: string[]; channels: Array<{ name: string; status: string }> };
  expect(report.status).toBe("degraded");
  expect(report.channels.find((c) => c.name === "slack")?.status).toBe("failed");
  expect(report.failures.join("\n")).toContain("slack: refused");

  const doctor = await runFermix(["doctor", "--json"], home.env);
  expect(doctor.exitCode).toBe(1);
  const { rows } = JSON.parse(doctor.stdout) as { rows: Array<{ check: string; status: string; detail: string }> };
  expect(rows.find((r) => r.check === "channel slack")).toEqual(expect.objectContaining({ status: "fail", detail: expect.stringContaining("refused") }));

  // The route is up and acknowledges an authentic event, but the sender is dropped: no turn, no reply.
  const body = JSON.stringify(slack.events.dm("hello?", { user: SLACK_ALICE }));
  const res = await fetch(new URL("/webhook/slack", d.url), {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...signSlack(body, SECRET, nowSeconds()) },
  });
  expect(res.status).toBe(200);
  await until(() => d.logs().includes("unauthorized sender dropped"), "the gateway to drop the sender");
  expect(model.requests).toHaveLength(0);
  expect(slack.calls("chat.postMessage")).toHaveLength(0);
});
