/**
 * The `[fermix_core.http]` keys this side of the server: which bind counts
 * as loopback, what allowed_hosts and dashboard_token accept (a bad entry
 * stops the load naming the key), and the secret store supplying the token
 * without it ever being in the log's reach unredacted.
 */
import { describe, expect, test } from "bun:test";
import { hostNameKey, isHostName } from "../../src/config/hostname.ts";
import { isLoopbackBind, resolveHttp } from "../../src/config/http.ts";
import { ConfigError, parseConfigText, resolveConfig } from "../../src/config/load.ts";

const FILE = "/home/you/.fermix/config.toml";
const resolve = (toml: string, secrets: Record<string, string> = {}) => resolveConfig({ file: parseConfigText(toml, FILE), env: {}, secrets, filePath: FILE });

function configError(toml: string): ConfigError {
  try {
    resolve(toml);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("isLoopbackBind", () => {
  test.each(["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]", "0:0:0:0:0:0:0:1", "localhost", "LOCALHOST", " 127.0.0.1 "])(
    "%p stays on this machine",
    (bind) => {
      expect(isLoopbackBind(bind)).toBe(true);
    },
  );
  test.each([
    "0.0.0.0",
    "::",
    "[::]",
    "192.168.1.5",
    "10.0.0.1",
    "128.0.0.1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "myhost",
    "localhost.localdomain",
    "127.0.0.1.nip.io",
  ])("%p reaches beyond it", (bind) => {
    expect(isLoopbackBind(bind)).toBe(false);
  });

  test("the bind judged is the one in force: the environment over the config", () => {
    expect(isLoopbackBind(resolveHttp({ FERMIX_HTTP_BIND: "0.0.0.0" }, { bind: "127.0.0.1" }).hostname)).toBe(false);
    expect(isLoopbackBind(resolveHttp({}, {}).hostname)).toBe(true);
  });
});

test("isHostName and hostNameKey: names only, compared without case or a trailing dot", () => {
  for (const name of ["fermix.example", "nas", "my-box.lan", "fermix.example.", "a_b.internal", "x".repeat(63)]) expect(isHostName(name)).toBe(true);
  for (const name of ["", ".", "https://fermix.example", "fermix.example:4030", "*.example", "-bad.example", "a..b", "x".repeat(64), "sp ace", "[::1]"]) {
    expect(isHostName(name)).toBe(false);
  }
  expect(hostNameKey("Fermix.Example.")).toBe("fermix.example");
});

describe("[fermix_core.http] allowed_hosts and dashboard_token", () => {
  test("defaults: no extra host names, no fixed token", () => {
    const { http } = resolve("").config.fermix_core;
    expect(http.allowed_hosts).toEqual([]);
    expect(http.dashboard_token).toBeUndefined();
  });

  test("names are kept as written", () => {
    expect(resolve(`[fermix_core.http]\nallowed_hosts = ["fermix.example", "NAS"]\n`).config.fermix_core.http.allowed_hosts).toEqual(["fermix.example", "NAS"]);
  });

  test("an entry with a scheme or a port stops the load, naming the key and saying what is allowed", () => {
    const error = configError(`[fermix_core.http]\nallowed_hosts = ["fermix.example", "https://fermix.example:8443"]\n`);
    expect(error.message).toBe(
      `invalid config in ${FILE}:\n  fermix_core.http.allowed_hosts[1] = "https://fermix.example:8443" is not valid: expected a host name such as fermix.example (no scheme, no port)`,
    );
  });

  test("a short dashboard_token stops the load, saying how long it must be and never showing it", () => {
    const error = configError(`[fermix_core.http]\ndashboard_token = "shortsecret"\n`);
    expect(error.message).toBe(
      `invalid config in ${FILE}:\n  fermix_core.http.dashboard_token = [redacted] is not valid: expected a string of at least 16 characters`,
    );
  });

  test("the token comes from the secret store like every credential, and is among the values the log redacts", () => {
    const token = "from-the-secret-store-000000";
    const resolved = resolve("", { "fermix_core.http.dashboard_token": token });
    expect(resolved.config.fermix_core.http.dashboard_token).toBe(token);
    expect(resolved.secretValues).toContain(token);
  });
});
