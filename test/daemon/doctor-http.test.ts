/** `fermix doctor`'s `http bind` row: a warning exactly when the bind in force reaches beyond loopback. */
import { expect, test } from "bun:test";
import { bindDoctorRow } from "../../src/daemon/doctor-http.ts";

test("no row on loopback, from the default, the config or the environment", () => {
  expect(bindDoctorRow({}, {})).toBeUndefined();
  expect(bindDoctorRow({}, { bind: "::1" })).toBeUndefined();
  expect(bindDoctorRow({ FERMIX_HTTP_BIND: "localhost" }, { bind: "0.0.0.0" })).toBeUndefined();
});

test("a warning naming the bind and the token when it reaches beyond; the environment wins over the config", () => {
  for (const [env, config, shown] of [
    [{}, { bind: "0.0.0.0" }, "0.0.0.0"],
    [{ FERMIX_HTTP_BIND: "192.168.1.5" }, { bind: "127.0.0.1" }, "192.168.1.5"],
  ] as const) {
    const row = bindDoctorRow(env, config)!;
    expect(row.check).toBe("http bind");
    expect(row.status).toBe("warn");
    expect(row.detail).toStartWith(`${shown} reaches beyond this machine: the status page, /events, /metrics and the health report need the dashboard token`);
    expect(row.detail).toContain("Authorization: Bearer");
  }
});

test("an invalid PORT leaves the row to the port check, which names it", () => {
  expect(bindDoctorRow({ FERMIX_HTTP_BIND: "0.0.0.0", PORT: "eighty" }, {})).toBeUndefined();
});
