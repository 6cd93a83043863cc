/** End to end with the compiled binary: a signed WhatsApp webhook in, the fake model answers, the reply lands on the Cloud API fake. */
import { afterEach, expect, test } from "bun:test";
import { type RunningDaemon, startDaemon } from "../helpers/binary.ts";
import { makeHome, type TestHome } from "../helpers/home.ts";
import { signWhatsApp } from "../helpers/sign.ts";
import { type FakeModel, reply, startFakeModel } from "../fakes/model-server.ts";
import { startWhatsAppFake, WA_USER, type WhatsAppFake } from "../fakes/whatsapp.ts";

const APP_SECRET = "e2e-whatsapp-app-secret-0123456789";
const VERIFY_TOKEN = "e2e-whatsapp-verify-token";
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function configToml(model: FakeModel, wa: WhatsAppFake): string {
  return `
[fermix_core.providers.fake]
api = "chat"
base_url = "${model.url}"
model = "fake-model"

[fermix_channels.telegram]
enabled = false

[fermix_channels.acp]
enabled = false

[fermix_channels.whatsapp]
enabled = true
access_token = "${wa.token}"
phone_number_id = "${wa.phoneNumberId}"
verify_token = "${VERIFY_TOKEN}"
app_secret = "${APP_SECRET}"
allowed_sender_ids = ["${WA_USER.wa_id}"]
graph_api_base = "${wa.graphBase("v25.0")}"
`;
}

test("a text message is answered on WhatsApp with the model's words, link previews off", async () => {
  const model = await startFakeModel();
  cleanups.push(() => model.stop());
  model.reply(reply.text("It comes in ", "blue and green."));
  const wa = startWhatsAppFake();
  cleanups.push(() => wa.stop());
  const home: TestHome = makeHome();
  cleanups.push(() => home.cleanup());
  home.writeConfig(configToml(model, wa));
  const daemon: RunningDaemon = await startDaemon(home.env);
  cleanups.push(() => (daemon.proc.exitCode === null ? daemon.stop("SIGKILL") : undefined));

  const health = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { channels: Array<Record<string, unknown>> };
  expect(health.channels.find((c) => c.name === "whatsapp")).toEqual({ name: "whatsapp", status: "ready", enabled: true, mode: "webhook", process_alive: true });

  const body = JSON.stringify(wa.webhook.text("Does it come in another color?"));
  const res = await fetch(new URL("/webhook/whatsapp", daemon.url), {
    method: "POST",
    headers: { "content-type": "application/json", ...signWhatsApp(body, APP_SECRET) },
    body,
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ ok: true });

  const texts = await wa.waitForTexts(WA_USER.wa_id, (t) => t.join("\n").includes("blue and green"), 15_000);
  expect(texts.join("\n")).toContain("It comes in");
  const call = wa.calls("messages").find((r) => JSON.stringify(r.body).includes("blue and green"))!;
  expect(call.path).toBe(`/v25.0/${wa.phoneNumberId}/messages`);
  expect(call.headers.authorization).toBe(`Bearer ${wa.token}`);
  expect(call.body).toMatchObject({ messaging_product: "whatsapp", to: WA_USER.wa_id, type: "text", text: { preview_url: false } });
  const [request] = await model.waitForRequests(1);
  expect(JSON.stringify(request!.body)).toContain("Does it come in another color?");
  for (const secret of [wa.token, APP_SECRET, VERIFY_TOKEN]) expect(daemon.logs()).not.toContain(secret);
}, 60_000);
