/**
 * The Talk page in headless Chromium, with Chromium's fake microphone fed
 * from a WAV file of speech (made with espeak-ng): the page sends the
 * microphone's audio through its WebSocket and the daemon to the realtime
 * fake, which hears a turn in it and answers; the page plays the answer and
 * shows both sides of the transcript. Then what the page's socket refuses:
 * another site's origin, and a Host that is not this server's.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { level, pcmToWav, samplesOf, wavToPcm } from "../../src/channels/realtime/pcm.ts";
import { respond, startRealtimeFake } from "../fakes/realtime.ts";
import { DESKTOP, fakeMicrophone, launchBrowser } from "../helpers/browser.ts";
import { ACP_OFF, providerToml, realtimeToml, TELEGRAM_OFF, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import { makeHome } from "../helpers/home.ts";

const start = e2eResources();
const VOICE_KEY = "sk-voice-page-key-000000";
const micDir = makeHome();
let browser: Browser;

beforeAll(async () => {
  // What the microphone "hears": espeak-ng's speech, as a plain 24 kHz PCM16 WAV (Chromium loops it).
  const made = Bun.spawnSync(["espeak-ng", "--stdout", "Hello Fermix, how is the weather today?"], { stdout: "pipe" });
  if (made.exitCode !== 0) throw new Error("espeak-ng failed (.ci/run installs it)");
  const wav = join(micDir.home, "..", "mic.wav");
  writeFileSync(wav, pcmToWav(wavToPcm(made.stdout)));
  browser = await launchBrowser(fakeMicrophone(wav));
});
afterAll(async () => {
  await browser?.close();
  micDir.cleanup();
});

async function setup() {
  const model = await start.model();
  const voice = await startRealtimeFake({ apiKey: VOICE_KEY });
  start.defer(() => voice.stop());
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      tomlTable("fermix_core.providers.voice", { base_url: voice.url, model: "unused-for-text", api_key: VOICE_KEY }) +
      realtimeToml({ provider: "voice" }) +
      TELEGRAM_OFF +
      ACP_OFF,
  );
  const daemon = await start.daemon(home);
  return { voice, daemon };
}

test("the Talk page sends the microphone to the provider through the daemon and plays the answer as it streams", async () => {
  const { voice, daemon } = await setup();
  voice.script({ heard: "Hello Fermix, how is the weather today?", responses: [respond.say("Sunny all day.", { audioMs: 1500, chunkMs: 100 })] });
  const context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 1, colorScheme: "light" });
  try {
    const page = await context.newPage();
    await page.goto(new URL("/talk", daemon.url).href);
    await page.click("#start");
    await page.waitForSelector("#transcript li.user", { timeout: 15_000 });
    await page.waitForSelector("#transcript li.assistant", { timeout: 15_000 });
    // The answer played through to its end: 1.5 s of it, counted by the page as each part ended.
    await page.waitForSelector("#played", { timeout: 15_000 });
    await until("the page to have played the whole answer", async () => Number(await page.getAttribute("#played", "data-ms")) >= 1400, 15_000);
    expect(await page.textContent("#transcript li.user span")).toBe("Hello Fermix, how is the weather today?");
    expect(await page.textContent("#transcript li.assistant span")).toBe("Sunny all day.");
    expect(await page.getAttribute("#conn", "class")).toContain("live");

    const session = voice.sessions[0]!;
    const heard = session.audio();
    // At least the fake's voice detection's worth of audio came from the page, and it is speech, not silence.
    expect(heard.byteLength).toBeGreaterThanOrEqual(voice.vadMs * 48);
    expect(level(samplesOf(heard))).toBeGreaterThan(0.005);
    expect(session.updates[0]).toMatchObject({ audio: { input: { turn_detection: { type: "server_vad" } } } });
    expect(voice.violations).toEqual([]);
  } finally {
    await context.close();
  }
  await until("the page's companion gone", async () => {
    const health = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { realtime: { active_clients: number } };
    return health.realtime.active_clients === 0;
  });
}, 40_000);

test("the page's socket answers only its own page: another site's origin is 403, another Host 421", async () => {
  const { daemon, voice } = await setup();
  const socketUrl = new URL("/talk/ws", daemon.url).href.replace("http", "ws");
  const refused = (headers: Record<string, string>) =>
    new Promise<string>((resolve) => {
      const ws = new WebSocket(socketUrl, { headers });
      ws.addEventListener("open", () => resolve("open"));
      ws.addEventListener("error", (e) => resolve((e as ErrorEvent).message));
    });
  expect(await refused({ Origin: "https://evil.example" })).toContain("403");
  expect(await refused({})).toContain("403");
  expect(await refused({ Origin: "http://evil.example", Host: "evil.example" })).toContain("421");
  expect(await refused({ Origin: `http://${daemon.url.host}` })).toBe("open");
  expect(voice.sessions).toEqual([]);
});
