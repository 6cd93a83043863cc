/** The compiled binary's command line: version, help, and the honest "not yet" of later subcommands. */
import { afterAll, describe, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { makeHome } from "../helpers/home.ts";
import { runFermix } from "../helpers/binary.ts";

const home = makeHome();
afterAll(() => home.cleanup());

describe("fermix binary", () => {
  test("--version prints the baked-in version", async () => {
    const r = await runFermix(["--version"], home.env);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`fermix ${pkg.version}\n`);
  });

  test("help lists every subcommand", async () => {
    const r = await runFermix(["help"], home.env);
    expect(r.exitCode).toBe(0);
    for (const name of ["run", "ask", "chat", "acp", "setup", "doctor"]) expect(r.stdout).toContain(`  ${name} `);
  });

  test("every subcommand has --help, which exits 0 without running it", async () => {
    for (const name of ["run", "ask", "chat", "acp", "setup", "doctor"]) {
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

test("subcommands a later release fills in say so and exit non-zero", async () => {
  for (const name of ["setup"]) {
    const r = await runFermix([name], home.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`\`fermix ${name}\` is not available yet`);
    expect(r.stdout).toBe("");
  }
});
