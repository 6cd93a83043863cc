/** End to end with the compiled binary: a signed WhatsApp webhook in, the fake model answers, the reply lands on the Cloud API fake. */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { WA_USER } from "../fakes/whatsapp.ts";
import { CHANNELS_OFF, providerToml, whatsappToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { postWhatsAppWebhook } from "../helpers/sign.ts";

const APP_SECRET = "e2e-whatsapp-app-secret-0123456789";
const VERIFY_TOKEN = "e2e-whatsapp-verify-token";
const start = e2eResources();

test("a text message is answered on WhatsApp with the model's words, link previews off", async () => {
  const model = await start.model();
  model.reply(reply.text("It comes in ", "blue and green."));
  const wa = start.whatsapp();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      whatsappToml({
        accessToken: wa.token,
        phoneNumberId: wa.phoneNumberId,
        verifyToken: VERIFY_TOKEN,
        appSecret: APP_SECRET,
        allowedSenderIds: [WA_USER.wa_id],
        graphApiBase: wa.graphBase("v25.0"),
      }),
  );
  const daemon = await start.daemon(home);

  const health = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { channels: Array<Record<string, unknown>> };
  expect(health.channels.find((c) => c.name === "whatsapp")).toEqual({
    name: "whatsapp",
    status: "ready",
    enabled: true,
    mode: "webhook",
    process_alive: true,
  });

  const body = JSON.stringify(wa.webhook.text("Does it come in another color?"));
  const res = await postWhatsAppWebhook(daemon.url, body, APP_SECRET);
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
