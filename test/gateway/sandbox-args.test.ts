/** `/sandbox` argument parsing and risk rules: pure, and chat text never makes them throw. */
import { describe, expect, test } from "bun:test";
import { parseSandboxArgs, riskOf } from "../../src/gateway/commands/sandbox.ts";
import { rng } from "../helpers/fuzz.ts";

describe("parsing", () => {
  test("each subcommand, and the aliases", () => {
    expect(parseSandboxArgs("sandbox", "")).toEqual({ kind: "show" });
    expect(parseSandboxArgs("sandbox", "grant /srv/data")).toEqual({ kind: "grant", path: "/srv/data", mode: "ro" });
    expect(parseSandboxArgs("grant", "~/Documents rw")).toEqual({ kind: "grant", path: "~/Documents", mode: "rw" });
    expect(parseSandboxArgs("grant", '"/srv/my files" write')).toEqual({ kind: "grant", path: "/srv/my files", mode: "rw" });
    expect(parseSandboxArgs("revoke", "/srv/data")).toEqual({ kind: "revoke", path: "/srv/data" });
    expect(parseSandboxArgs("sandbox", "env allow EDITOR")).toEqual({ kind: "env", rule: "allow", name: "EDITOR" });
    expect(parseSandboxArgs("sandbox", "env deny LANG")).toEqual({ kind: "env", rule: "deny", name: "LANG" });
    expect(parseSandboxArgs("sandbox", "env set GREETING=hello there")).toEqual({ kind: "env-set", name: "GREETING", value: "hello there" });
    expect(parseSandboxArgs("sandbox", "env set A b")).toEqual({ kind: "env-set", name: "A", value: "b" });
    expect(parseSandboxArgs("sandbox", "env clear A")).toEqual({ kind: "env-clear", name: "A" });
    expect(parseSandboxArgs("sandbox", "preset on Git")).toEqual({ kind: "preset", on: true, name: "git" });
    expect(parseSandboxArgs("sandbox", "preset")).toEqual({ kind: "presets" });
    expect(parseSandboxArgs("sandbox", "network off")).toEqual({ kind: "network", on: false });
    expect(parseSandboxArgs("confirm", "ab cd 2345")).toEqual({ kind: "confirm", token: "abcd2345" });
    expect(parseSandboxArgs("sandbox", "deny ABCD2345")).toEqual({ kind: "deny", token: "ABCD2345" });
  });

  test("what does not parse says what is wrong", () => {
    expect(parseSandboxArgs("grant", "")).toMatchObject({ kind: "usage", problem: expect.stringContaining("needs a path") });
    expect(parseSandboxArgs("confirm", "")).toMatchObject({ kind: "usage", problem: expect.stringContaining("needs the code") });
    expect(parseSandboxArgs("sandbox", "env set 1BAD=x")).toMatchObject({ kind: "usage" });
    expect(parseSandboxArgs("sandbox", "network maybe")).toMatchObject({ kind: "usage" });
    expect(parseSandboxArgs("sandbox", "frobnicate")).toMatchObject({ kind: "usage", problem: expect.stringContaining("frobnicate") });
  });

  test("10,000 random lines never throw", () => {
    const r = rng(0x5a4d);
    const words = [
      "grant",
      "revoke",
      "env",
      "set",
      "allow",
      "deny",
      "clear",
      "preset",
      "on",
      "off",
      "network",
      "confirm",
      "rw",
      "ro",
      "=",
      '"',
      "~/",
      "/",
      "\n",
      " ",
      "\u0000",
      "🙂",
    ];
    for (let i = 0; i < 10_000; i++) {
      const line = Array.from({ length: r.int(0, 6) }, () => (r.next() < 0.6 ? r.pick(words) : r.string(r.int(0, 8)))).join(r.pick([" ", "", "  ", "\t"]));
      const alias = r.pick(["sandbox", "grant", "revoke", "confirm"]);
      try {
        const out = parseSandboxArgs(alias, line);
        expect(typeof out.kind).toBe("string");
      } catch (error) {
        throw new Error(`run ${i}: /${alias} ${JSON.stringify(line)} threw ${error}`);
      }
    }
  });
});

describe("what is risky", () => {
  const HOME = "/home/owner";
  test("read-write grants, grants outside the home, network on, credentials in the environment", () => {
    expect(riskOf({ kind: "grant", path: "x", mode: "ro" }, HOME, "/home/owner/docs")).toBeNull();
    expect(riskOf({ kind: "grant", path: "x", mode: "rw" }, HOME, "/home/owner/docs")).toContain("change files");
    expect(riskOf({ kind: "grant", path: "x", mode: "ro" }, HOME, "/srv/data")).toContain("outside your home");
    expect(riskOf({ kind: "network", on: true }, HOME)).not.toBeNull();
    expect(riskOf({ kind: "network", on: false }, HOME)).toBeNull();
    expect(riskOf({ kind: "env-set", name: "GITHUB_TOKEN", value: "x" }, HOME)).toContain("credential");
    expect(riskOf({ kind: "env-set", name: "EDITOR", value: "vim" }, HOME)).toBeNull();
    expect(riskOf({ kind: "env", rule: "allow", name: "OPENAI_API_KEY" }, HOME)).toContain("credential");
    expect(riskOf({ kind: "env", rule: "deny", name: "OPENAI_API_KEY" }, HOME)).toBeNull();
    expect(riskOf({ kind: "preset", on: true, name: "node" }, HOME)).toContain("network");
    expect(riskOf({ kind: "preset", on: true, name: "git" }, HOME)).toBeNull();
  });
});
