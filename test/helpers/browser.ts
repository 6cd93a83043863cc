/**
 * Headless Chromium for page tests and `bun run screenshots`: Debian's
 * chromium (installed by .ci/run when missing) driven by playwright-core,
 * which brings no browser of its own. The flags keep it off the network
 * (no background requests, component updates or sync; this machine has no
 * route out) and the profile is a fresh temporary one per launch.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** The browser binary; FERMIX_TEST_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env.FERMIX_TEST_CHROMIUM ?? "/usr/bin/chromium";

const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** Headless Chromium; `extraArgs` add flags (a fake microphone fed from a file, for the Talk page). */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...FLAGS, ...extraArgs], timeout: 30_000 });
}

/** Chromium's fake microphone, playing `wav` (looped) to any page that asks, without a permission prompt. */
export const fakeMicrophone = (wav: string): string[] => [
  "--use-fake-device-for-media-stream",
  "--use-fake-ui-for-media-stream",
  `--use-file-for-fake-audio-capture=${wav}`,
  "--autoplay-policy=no-user-gesture-required",
];

/** Phone and desktop viewports, for page tests and screenshots. */
export const PHONE = { width: 390, height: 844 } as const;
export const DESKTOP = { width: 1280, height: 900 } as const;
