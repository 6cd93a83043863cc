/** The fault class a provider's status and error code mean (src/agent/providers/types.ts faultOf). */
import { expect, test } from "bun:test";
import { faultOf } from "../../../src/agent/providers/types.ts";

test("a refused key is the auth class wherever it is said: an HTTP status, a code in a stream, a status carried as a code", () => {
  expect(faultOf(401, undefined)).toBe("auth");
  expect(faultOf(403, "anything")).toBe("auth");
  expect(faultOf(undefined, "invalid_api_key")).toBe("auth");
  expect(faultOf(undefined, "authentication_error")).toBe("auth");
  // OpenRouter reports a failure mid-stream as an error chunk whose code is the HTTP status.
  expect(faultOf(undefined, "401")).toBe("auth");
  expect(faultOf(undefined, "429")).toBe("rate_limited");
  expect(faultOf(undefined, "502")).toBe("server");
});

test("the other classes keep their meaning", () => {
  expect(faultOf(undefined, "insufficient_quota")).toBe("quota");
  expect(faultOf(undefined, "server_is_overloaded")).toBe("server");
  expect(faultOf(undefined, "idle_timeout")).toBe("cut_off");
  expect(faultOf(undefined, "ECONNREFUSED")).toBe("unreachable");
  expect(faultOf(undefined, "first_byte_timeout")).toBe("timeout");
  expect(faultOf(500, undefined)).toBe("server");
});
