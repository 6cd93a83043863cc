/** The compiled binary's command line: version, help, usage errors. */
import { afterAll, describe, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { runFermix } from "../helpers/binary.ts";
import { makeHome } from "../helpers/home.ts";

const home = makeHome();
afterAll(() => home.cleanup());

describe("fermix binary", () => {
  test("--version prints the baked-in version, commit and target", async () => {
    const r = await runFermix(["--version"], home.env);
    expect(r.exitCode).toBe(0);
    // The commit is the one the binary was built from: a hash (+dirty with uncommitted changes), or "unknown" outside git.
    const commit = "([0-9a-f]{12}(\\+dirty)?|unknown)";
    const target = `${process.platform}-${process.arch}`;
    expect(r.stdout).toMatch(new RegExp(`^fermix ${pkg.version.replaceAll(".", "\\.")} \\(${commit}, ${target}\\)\n$`));
  });

  test("help lists every subcommand", async () => {
    const r = await runFermix(["help"], home.env);
    expect(r.exitCode).toBe(0);
    for (const name of ["run", "ask", "chat", "acp", "talk", "setup", "service", "doctor"]) expect(r.stdout).toContain(`  ${name} `);
  });

  test("every subcommand has --help, which exits 0 without running it", async () => {
    for (const name of ["run", "ask", "chat", "acp", "talk", "setup", "service", "doctor"]) {
      const r = await runFermix([name, "--help"], home.env);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toStartWith(`Usage: fermix ${name}`);
    }
  });

  test("an unknown command is a usage error (exit 2) pointing at help", async () => {
    const r = await runFermix(["frobnicate"], home.env);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
    expect(r.stderr).toContain("fermix help");
  });
});

test("setup --help documents every flag, the fixed names included", async () => {
  const r = await runFermix(["setup", "--help"], home.env);
  expect(r.exitCode).toBe(0);
  for (const flag of [
    "--reconfigure",
    "--yes",
    "--check",
    "--provider-base-url",
    "--model",
    "--api-key",
    "--telegram-bot-token",
    "--telegram-owner",
    "--slack-bot-token",
    "--whatsapp-access-token",
    "--discord-bot-token",
    "--signal-account",
    "--transcription-backend",
    "--transcription-model",
    "--transcription-api-key",
    "--realtime-enabled",
    "--realtime-provider",
    "--realtime-model",
    "--realtime-voice",
    "--http-port",
  ]) {
    expect(r.stdout).toMatch(new RegExp(`^  ${flag}[ ,]`, "m"));
  }
});
