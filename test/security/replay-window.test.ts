/**
 * The duplicate memory covers the replay window, from outside against the
 * compiled binary. WhatsApp accepts a message up to `max_message_age_hours`
 * old by its own timestamp, and its webhook signature never expires: a
 * captured signed body can be posted again for as long as the window runs.
 * With the window at 48 hours, a body stamped 25 hours ago is answered once;
 * posted again a day later — after a restart, whose start-up sweep would
 * have dropped a key kept for a fixed 24 hours — it is not answered again.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { reply, userText } from "../fakes/model-server.ts";
import { WA_USER } from "../fakes/whatsapp.ts";
import { CHANNELS_OFF, providerToml, whatsappToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { postWhatsAppWebhook } from "../helpers/sign.ts";

const APP_SECRET = "replay-window-app-secret-0123456789";
const HOUR_MS = 60 * 60_000;
const start = e2eResources();

test("max_message_age_hours = 48: a signed capture stamped 25 hours ago is answered once, and again a day later, after a restart and its sweep, not at all", async () => {
  const model = await start.model();
  model.fallback((request) => reply.text(`Answer to: ${userText(request)}`));
  const wa = start.whatsapp();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      whatsappToml({
        accessToken: wa.token,
        phoneNumberId: wa.phoneNumberId,
        verifyToken: "replay-window-verify-token",
        appSecret: APP_SECRET,
        allowedSenderIds: [WA_USER.wa_id],
        graphApiBase: wa.graphBase(),
        maxMessageAgeHours: 48,
      }),
  );
  const answers = (words: string) => wa.calls("messages").filter((call) => JSON.stringify(call.body).includes(`Answer to: ${words}`));

  // The capture: a real message, stamped 25 hours ago, inside the 48-hour window.
  const capture = JSON.stringify(wa.webhook.text("Where do herons nest?", { timestamp: Math.floor((Date.now() - 25 * HOUR_MS) / 1000) }));
  const first = await start.daemon(home);
  expect((await postWhatsAppWebhook(first.url, capture, APP_SECRET)).status).toBe(200);
  await wa.waitForTexts(WA_USER.wa_id, (texts) => texts.some((t) => t.includes("Answer to: Where do herons nest?")), 15_000);
  expect(await first.stop("SIGTERM")).toBe(0);

  // A day passes: the key the first post wrote is now 25 hours old (its times moved back in the
  // daemon's database while it is stopped — the store's clock is the real one), past the fixed day
  // the key used to be kept for, still inside the 48 hours the channel accepts the message.
  const db = new Database(join(home.home, "fermix.db"));
  const moved = db.run("UPDATE idempotency SET seen_at = seen_at - ?1, expires_at = expires_at - ?1 WHERE channel = 'whatsapp'", [25 * HOUR_MS]);
  expect(moved.changes).toBe(1);
  db.close();

  // The restart sweeps old keys at start; the replayed capture is acknowledged as any authentic request is.
  const second = await start.daemon(home);
  expect((await postWhatsAppWebhook(second.url, capture, APP_SECRET)).status).toBe(200);
  // The window in which a second answer would show: a fresh message from the same chat is queued
  // behind anything the replay started (one turn at a time per conversation, in order), so once its
  // answer has arrived, an answer to the replay would have arrived before it.
  const fresh = JSON.stringify(wa.webhook.text("And where do they winter?"));
  expect((await postWhatsAppWebhook(second.url, fresh, APP_SECRET)).status).toBe(200);
  await wa.waitForTexts(WA_USER.wa_id, (texts) => texts.some((t) => t.includes("Answer to: And where do they winter?")), 15_000);

  expect(answers("Where do herons nest?")).toHaveLength(1);
  expect(model.requests.filter((r) => userText(r).includes("Where do herons nest?"))).toHaveLength(1);
}, 60_000);
