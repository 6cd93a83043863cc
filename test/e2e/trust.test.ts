/**
 * Refusal at start with the compiled binary: an enabled chat channel with
 * neither owner nor allowlist is logged as refused, reported failed in
 * health and doctor, and its webhook route stays up but denies every sender.
 */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { SLACK_ALICE } from "../fakes/slack.ts";
import { runFermix } from "../helpers/binary.ts";
import { CHANNELS_OFF, providerToml, slackToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { until } from "../helpers/gateway.ts";
import { postSlackWebhook } from "../helpers/sign.ts";

const SECRET = "trust-test-signing-secret-0000";
const start = e2eResources();

test("a Slack channel with no owner and no allowlist is refused at start, visible in health and doctor, and answers nobody", async () => {
  const model = await start.model();
  model.fallback(reply.text("should never be asked"));
  const slack = start.slack();
  const home = start.home();
  // No owner_user_id and no allowed_user_ids: the point of this test.
  home.writeConfig(providerToml(model.url, { api: "chat" }) + CHANNELS_OFF + slackToml({ botToken: slack.token, signingSecret: SECRET, apiUrl: slack.apiUrl }));
  const d = await start.daemon(home);
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
  const res = await postSlackWebhook(d.url, body, SECRET);
  expect(res.status).toBe(200);
  await until(() => d.logs().includes("unauthorized sender dropped"), "the gateway to drop the sender");
  expect(model.requests).toHaveLength(0);
  expect(slack.calls("chat.postMessage")).toHaveLength(0);
});
