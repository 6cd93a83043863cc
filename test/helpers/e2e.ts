/**
 * Per-test resources for end-to-end test files: the fake model, the platform
 * fakes, a temp home and the compiled daemon. Each starter registers its own
 * teardown, and after every test they run newest first (daemon, then home,
 * then fakes), so a failed test never leaves a process or a directory behind
 * for the next one.
 */
import { afterEach } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDiscordFake } from "../fakes/discord.ts";
import { startFakeModel } from "../fakes/model-server.ts";
import { startSignalFake } from "../fakes/signal.ts";
import { startSlackFake } from "../fakes/slack.ts";
import { startTelegramFake } from "../fakes/telegram.ts";
import { startWhatsAppFake } from "../fakes/whatsapp.ts";
import { startDaemon } from "./binary.ts";
import { makeHome, type TestHome } from "./home.ts";

/** Call once at the top of a test file: registers the after-each teardown and returns the starters that feed it. */
export function e2eResources() {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  /** Run `cleanup` after the current test, before everything registered earlier. */
  const defer = (cleanup: () => unknown): void => {
    cleanups.push(cleanup);
  };
  /** A fake (anything with stop()) that is stopped after the test. */
  const stopped = <T extends { stop(): unknown }>(fake: T): T => {
    defer(() => fake.stop());
    return fake;
  };
  return {
    defer,
    /** The fake model server. */
    model: async () => stopped(await startFakeModel()),
    /** The Slack Web API fake. */
    slack: () => stopped(startSlackFake()),
    /** The WhatsApp Cloud API fake. */
    whatsapp: () => stopped(startWhatsAppFake()),
    /** The Telegram Bot API fake. */
    telegram: (options?: Parameters<typeof startTelegramFake>[0]) => stopped(startTelegramFake(options)),
    /** The fake signal-cli: its folder, the wrapper to configure as cli_path, and its attachment store. */
    signal: () => stopped(startSignalFake()),
    /** The Discord fake: REST API and gateway on one loopback port. */
    discord: () => stopped(startDiscordFake()),
    /** A private temp home, removed after the test. */
    home(extraEnv?: Record<string, string | undefined>): TestHome {
      const home = makeHome(extraEnv);
      defer(() => home.cleanup());
      return home;
    },
    /** `fermix run` in `home`, SIGKILLed after the test unless the test already stopped it. */
    async daemon(home: TestHome) {
      const daemon = await startDaemon(home.env);
      defer(async () => {
        if (daemon.proc.exitCode === null) await daemon.stop("SIGKILL");
      });
      return daemon;
    },
    /** A folder outside the home (under /var/tmp, by its real path) with a report in it, removed after the test. */
    dataFolder(): string {
      const dir = realpathSync(mkdtempSync(join("/var/tmp", "fermix-e2e-data-")));
      writeFileSync(join(dir, "report.txt"), "Q3 revenue: 42 units\n");
      defer(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
  };
}

export { until } from "./wait.ts";
