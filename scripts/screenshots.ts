/**
 * `bun run screenshots`: pictures of the status page, the setup page and
 * the Talk page at phone and desktop widths, for the README. The compiled
 * daemon runs against the loopback fakes (a model, Telegram, Slack, the
 * realtime API) with a few messages answered, so the page shows what a
 * person sees on a working install (a second fake model stands for a model
 * server found on this machine; Chromium's fake microphone says a sentence
 * made by espeak-ng to the Talk page); headless Chromium (the page tests'
 * browser) takes the pictures into docs/.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pcmToWav, wavToPcm } from "../src/channels/realtime/pcm.ts";
import { startFakeModel } from "../test/fakes/model-server.ts";
import { respond, startRealtimeFake } from "../test/fakes/realtime.ts";
import { startSlackFake } from "../test/fakes/slack.ts";
import { ALICE, startTelegramFake } from "../test/fakes/telegram.ts";
import { startDaemon } from "../test/helpers/binary.ts";
import { DESKTOP, fakeMicrophone, launchBrowser, PHONE } from "../test/helpers/browser.ts";
import { ACP_OFF, providerToml, realtimeToml, slackToml, telegramToml, tomlTable } from "../test/helpers/config.ts";
import { controlRequest } from "../test/helpers/control.ts";
import { makeHome } from "../test/helpers/home.ts";
import { until } from "../test/helpers/wait.ts";

const DOCS = resolve(import.meta.dir, "../docs");

const model = await startFakeModel();
const voice = await startRealtimeFake({ apiKey: "sk-screenshot-voice-0000" });
const localServer = await startFakeModel();
const telegram = startTelegramFake();
const slack = startSlackFake();
const home = makeHome({ FERMIX_SETUP_PROBES: `127.0.0.1:${localServer.port}` });
home.writeConfig(
  providerToml(model.url, { name: "openai", model: "gpt-5.1", apiKey: "sk-screenshot-0000", api: "responses" }) +
    telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
    slackToml({ botToken: slack.token, signingSecret: "screenshot-secret", ownerUserId: "U0OWNER", apiUrl: slack.apiUrl }) +
    tomlTable("fermix_core.providers.voice", { base_url: voice.url, model: "gpt-5.1", api_key: "sk-screenshot-voice-0000" }) +
    realtimeToml({ provider: "voice" }) +
    ACP_OFF,
);
// What the Talk page's microphone hears: a sentence spoken by espeak-ng, as a plain 24 kHz WAV.
const micWav = join(home.home, "..", "mic.wav");
const spoken = Bun.spawnSync(["espeak-ng", "--stdout", "What's the weather like this afternoon?"], { stdout: "pipe" });
if (spoken.exitCode !== 0) throw new Error("espeak-ng is needed for the Talk page's picture");
writeFileSync(micWav, pcmToWav(wavToPcm(spoken.stdout)));
const daemon = await startDaemon(home.env);
const browser = await launchBrowser(fakeMicrophone(micWav));
try {
  const questions = ["What's on my calendar today?", "Remind me what the plumber said", "Summarise this article", "Thanks!"];
  for (const [i, question] of questions.entries()) {
    model.reply({ kind: "stream", spec: { text: [`Answer number ${i + 1}.`], usage: { input: 1200 + i * 340, output: 180 + i * 25 } } });
    telegram.pushMessage(telegram.message.text(question));
    await telegram.waitForTexts(ALICE.id, (texts) => texts.length > i, 15_000);
  }
  await Bun.sleep(1500);

  const context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 1, colorScheme: "light" });
  const page = await context.newPage();
  for (const [name, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.goto(new URL("/", daemon.url).href);
    await page.waitForSelector("#conn.live");
    await page.screenshot({ path: join(DOCS, `dashboard-${name}.png`), fullPage: true });
  }
  const link = await controlRequest(home.home, { type: "setup_link" });
  if (link.type !== "setup_link") throw new Error(`no setup link: ${JSON.stringify(link)}`);
  await page.goto(link.url);
  for (const [name, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.goto(new URL("/setup", daemon.url).href);
    await page.screenshot({ path: join(DOCS, `setup-${name}.png`), fullPage: true });
  }
  for (const [name, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    voice.script({
      heard: "What's the weather like this afternoon?",
      responses: [respond.say("Sunny and around twenty degrees, with a light breeze from the west. A good afternoon for a walk.", { audioMs: 1500 })],
    });
    await page.setViewportSize(viewport);
    await page.goto(new URL("/talk", daemon.url).href);
    await page.click("#start");
    await page.waitForSelector("#transcript li.assistant", { timeout: 15_000 });
    // The page's CSP allows no evaluated script: poll the counter it keeps instead.
    await until("the answer played", async () => Number(await page.getAttribute("#played", "data-ms")) > 1000, 15_000);
    await page.screenshot({ path: join(DOCS, `talk-${name}.png`), fullPage: true });
    await page.click("#end");
    await page.waitForSelector("#state[data-state=ended]");
  }
  console.log(`screenshots written to ${DOCS}: dashboard-{desktop,phone}.png, setup-{desktop,phone}.png, talk-{desktop,phone}.png`);
} finally {
  await browser.close();
  await daemon.stop();
  home.cleanup();
  await telegram.stop();
  await slack.stop();
  await model.stop();
  await localServer.stop();
  voice.stop();
}
